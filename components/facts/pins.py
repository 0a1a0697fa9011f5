"""Pinned versions the program deploys or validates against, each with its source and check date.

Driver-installer, device-plugin and GPU Operator pins live beside the manifests they pin
(components/platform/driver.py, components/platform/device_plugin.py); this module holds the rest.
"""

from __future__ import annotations

import re

# --- vLLM, the default workload image ---------------------------------------------------------
# v0.29.0 is the newest vLLM release found in the stored sources (checked 2026-11-22): released
# 2026-09 (coreweave/ml-containers PR 225 "feat(vllm): v0.29.0", 2026-09-09; NVIDIA-NeMo/RL
# PR 4058 moved on to "0.29"). Newer releases may exist; the corpora end around 2026-09.
# Image tags: vllm-project/vllm PR 39878 ("Switch default CUDA to 13.0", merged 2026-04, first in
# v0.20.0) made the unsuffixed vllm/vllm-openai tag a CUDA 13.0 build and `-cu129` the CUDA 12.9
# variant (vast-ai/base-image PR 158 checked the tags: "v0.20.0-cu129" 12.9, "v0.20.0-cu130"
# 13.0; kaito-project/kaito PR 2078: "vllm 0.22.1 ... use CUDA 13 by default").
VLLM_VERSION = "v0.29.0"
VLLM_IMAGE = f"vllm/vllm-openai:{VLLM_VERSION}"
VLLM_CUDA = "13.0"
# CUDA 13.x needs an R580 driver: 580.65.06 is CUDA 13.0's minimum Linux driver (CUDA 13.0
# release notes, https://docs.nvidia.com/cuda/archive/13.0.0/cuda-toolkit-release-notes/, table
# "CUDA Toolkit and Corresponding Driver Versions"; Google's own R580 installer manifest pins
# NVIDIA_DRIVER_VERSION "580.65.06", container-engine-accelerators
# nvidia-driver-installer/ubuntu/daemonset-preloaded-R580.yaml at e4119927). "CUDA 13 requires
# Nvidia GPU driver 580+" (kaito-project/kaito PR 2078).
VLLM_MIN_DRIVER = "580.65.06"
# Which GKE driver gives that: GKE's `default` driver was R535 in 2026 ("the Daemonset installs
# driver version 535.274.02 ... CUDA 13 based operations fail", rapidsai/deployment issue 656,
# 2026-02) and `latest` gives R580 ("Using the `latest` flag ensures that driver version > 580.65
# is installed, which is a requirement when using CUDA 13", rapidsai/deployment PR 659). So:
#   Standard: node pools running VLLM_IMAGE need `driver: latest` (gpu_driver_version LATEST;
#     GKE documents LATEST for COS: '"Latest" GPU driver in COS', GPUDriverInstallationConfig).
#   Autopilot: pods select the driver with the node selector
#     cloud.google.com/gke-gpu-driver-version: "latest" (GKE node auto-provisioning "choose
#     driver version", quoted in GoogleCloudPlatform/container-engine-accelerators issue 402).
# The exact R580 patch GKE 1.35 installs could not be read from Google's driver table.
GKE_DRIVER_FOR_VLLM = "latest"
# CUDA 13.0 dropped Volta (sm_70) and older ("CUDA 13.0 dropped support for Volta (SM70), but not
# Turing (SM75)", NVIDIA/cuDecomp PR 97): the default image cannot run on V100, P100 or P4
# (compute capabilities in components/facts/catalog/gpus.py). VLLM_IMAGE_CUDA12 is the CUDA 12.9
# build of
# the same release, for V100 (7.0). P4 and P100 (6.x) are below the 7.0 that vLLM's GPU
# installation docs require (https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html;
# not re-read for this release) and run neither. Whether the CUDA 12.9 build runs on GKE's R535
# `default` driver through CUDA's minor-version compatibility is unconfirmed.
VLLM_MIN_COMPUTE_CAPABILITY = (7, 5)
VLLM_IMAGE_CUDA12 = f"{VLLM_IMAGE}-cu129"

# --- Kubernetes schema version ------------------------------------------------------------------
# GKE's REGULAR channel: "Version 1.35.8-gke.1036000 is now the default version for cluster
# creation in the Regular channel" (GKE Regular channel release notes, September 17, 2026,
# https://cloud.google.com/kubernetes-engine/docs/release-notes#September_17_2026; checked
# 2026-11-22). kubernetes-validate 1.37.0 (pyproject.toml, `plan` group) ships the 1.35.0 schema.
KUBERNETES_SCHEMA_VERSION = "1.35"

# --- GKE versions a new cluster starts at, per release channel -------------------------------
# REGULAR 1.35.8-gke.1036000 (above); STABLE 1.34.6-gke.1307000 (GKE Stable channel release notes
# feed, May 27, 2026); RAPID gets every version before REGULAR does, so REGULAR's default is a
# lower bound for it. Rules that need a minimum GKE version compare against these.
CHANNEL_DEFAULT_VERSION = {
    "RAPID": "1.35.8-gke.1036000",
    "REGULAR": "1.35.8-gke.1036000",
    "STABLE": "1.34.6-gke.1307000",
}


def gke_version(text: str) -> tuple[int, ...]:
    """'1.32.2-gke.1652000' -> (1, 32, 2, 1652000): GKE versions compare part by part."""
    return tuple(int(part) for part in re.findall(r"[0-9]+", text))
