"""Pinned versions the program deploys or validates against, each with its source and check date.

Driver-installer, device-plugin and GPU Operator pins live beside the manifests they pin
(components/platform/driver.py, components/platform/device_plugin.py); this module holds the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# --- vLLM, the default workload image ---------------------------------------------------------
# v0.29.0 is the newest vLLM release found in the stored sources (checked 2026-11-22): released
# 2026-09 (coreweave/ml-containers PR 225 "feat(vllm): v0.29.0", 2026-09-09; NVIDIA-NeMo/RL
# PR 4058 moved on to "0.29"). Newer releases may exist; the corpora end around 2026-09.
# Image tags: vllm-project/vllm PR 39878 ("Switch default CUDA to 13.0", merged 2026-04, first in
# v0.20.0) made the unsuffixed vllm/vllm-openai tag a CUDA 13.0 build and `-cu129` the CUDA 12.9
# variant. v0.29.0's release notes list its images ("Docker Images",
# https://github.com/vllm-project/vllm/releases/tag/v0.29.0, read from a stored copy): "CUDA 13.0
# (Default) vllm/vllm-openai:v0.29.0 (v0.29.0-cu130 also works)", "CUDA 12.9 ...:v0.29.0-cu129",
# "CUDA 13.0 + Ubuntu 24.04 ...:v0.29.0-ubuntu2404", "CUDA 12.9 + Ubuntu 24.04
# ...:v0.29.0-cu129-ubuntu2404".
VLLM_VERSION = "v0.29.0"
VLLM_REPOSITORY = "vllm/vllm-openai"


@dataclass(frozen=True)
class VllmRelease:
    """One vllm/vllm-openai image tag: the CUDA it is built for and, where published somewhere we
    can read, the digest of its multi-architecture index (what a pull by tag resolves to)."""

    tag: str
    cuda: str
    digest: str | None
    source: str


RELEASE_NOTES = "vLLM v0.29.0 release notes, Docker Images"
# The digests: a tag can be moved; a digest names the bytes. Neither Docker Hub nor vLLM's docs
# list them, so each is taken from public manifests that pin it (two or more each, found by
# searching for the tag with "@sha256"):
#   v0.29.0: hakopod/templates@c8ee105bb083f2509884ebe4afe530c1d03dd1e3:blueprints/vllm/hakopod.toml
#     (its README.md: "AMD64/ARM64 registry manifests checked", so one index for both
#     architectures) and basnijholt/dotfiles@bc8f1709f8c66a86c9f970f67aabf1162a8d521e:
#     configs/nixos/hosts/pc/vllm-swap/README.md ("vllm/vllm-openai:v0.29.0 at digest ...").
#   v0.29.0-cu129: YuTungLam/Tool-Output-Injection-Attacks-on-Agentic-AI-Systems@121f18e46c9a621
#     7433d51a0c47a0be1ed36bfa4:codebase/agentdojo-lab/hpc/README.md ("Registry inspection
#     resolved vllm/vllm-openai:v0.29.0-cu129 on 2026-09-14: Registry index: sha256:7ef5a35d...";
#     its linux/amd64 manifest is sha256:3e10e818...) and javier-house/vllm-Turing@260f300b8697649
#     a0dc7f25d2724f9dbed105f0a:docker/build.sh.
# The other tags' digests were found nowhere readable: they are judged by tag only.
VLLM_RELEASES = (
    VllmRelease(
        "v0.29.0",
        "13.0",
        "sha256:c2914767605584b6d8f45686b82de173ecc99e781897aa3d0a66dacd72c51ae1",
        f"{RELEASE_NOTES}; digest: hakopod/templates, basnijholt/dotfiles",
    ),
    VllmRelease("v0.29.0-cu130", "13.0", None, RELEASE_NOTES),
    VllmRelease("v0.29.0-ubuntu2404", "13.0", None, RELEASE_NOTES),
    VllmRelease(
        "v0.29.0-cu129",
        "12.9",
        "sha256:7ef5a35d1ef8ce2cf9d671dd91eec6e367c5849262e0362b4d3d4a26be0d87d2",
        f"{RELEASE_NOTES}; digest: YuTungLam/Tool-Output-Injection-Attacks-on-Agentic-AI-Systems, "
        "javier-house/vllm-Turing",
    ),
    VllmRelease("v0.29.0-cu129-ubuntu2404", "12.9", None, RELEASE_NOTES),
)


# The vLLM images that carry the Run:ai Model Streamer with its Cloud Storage backend, which
# streams safetensors weights from a gs:// model (`--load-format runai_streamer`): vLLM v0.29.0's
# docker/Dockerfile lines 979-986 (stage vllm-runtime-base, under vllm-openai) install
# "runai-model-streamer[s3,gcs,azure]>=0.15.7" (read in the v0.29.0 release's sdist on PyPI,
# vllm-0.29.0.tar.gz; vllm-project/vllm PR 26464 added the gcs part "to enable GCS support in the
# nightly / published image"). The release notes say v0.29.0-cu130 is the same image; the other
# v0.29.0 tags are built otherwise (CUDA 12.9, Ubuntu 24.04) and were not read: not listed.
STREAMER_GCS_TAGS = frozenset({"v0.29.0", "v0.29.0-cu130"})
STREAMER_GCS_SOURCE = "vLLM v0.29.0 docker/Dockerfile lines 979-986"


def vllm_release(tag: str) -> VllmRelease:
    return next(r for r in VLLM_RELEASES if r.tag == tag)


def pinned(release: VllmRelease) -> str:
    """`vllm/vllm-openai:TAG@sha256:...`: pulled by digest, the tag kept for readers."""
    assert release.digest is not None, f"{release.tag} has no published digest to pin"
    return f"{VLLM_REPOSITORY}:{release.tag}@{release.digest}"


VLLM_IMAGE = pinned(vllm_release(VLLM_VERSION))
VLLM_CUDA = vllm_release(VLLM_VERSION).cuda
# CUDA 13.x needs an R580 driver: 580.65.06 is CUDA 13.0's minimum Linux driver (CUDA 13.0
# release notes, https://docs.nvidia.com/cuda/archive/13.0.0/cuda-toolkit-release-notes/, table
# "CUDA Toolkit and Corresponding Driver Versions"; Google's own R580 installer manifest pins
# NVIDIA_DRIVER_VERSION "580.65.06", container-engine-accelerators
# nvidia-driver-installer/ubuntu/daemonset-preloaded-R580.yaml at e4119927). "CUDA 13 requires
# Nvidia GPU driver 580+" (kaito-project/kaito PR 2078).
CUDA_NEEDING_R580 = 13
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
# build of the same release, for V100 (7.0). P4 and P100 (6.x) are below the 7.0 that vLLM's GPU
# installation docs require (https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html;
# not re-read for this release) and run neither. Whether the CUDA 12.9 build runs on GKE's R535
# `default` driver through CUDA's minor-version compatibility is unconfirmed.
VLLM_MIN_COMPUTE_CAPABILITY = (7, 5)
VLLM_IMAGE_CUDA12 = pinned(vllm_release(f"{VLLM_VERSION}-cu129"))

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
