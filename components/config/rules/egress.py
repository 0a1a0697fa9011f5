"""Where each workload's pods may connect (workloads[].egress), and who runs them: the CIDR checks
and the derived defaults components/platform/egress.py and components/service/workload.py build
on."""

from __future__ import annotations

from collections.abc import Iterator

from .. import defaults
from ..context import Context
from ..formats import is_vllm_image
from ..problems import Problem
from ..schema import WorkloadSpec
from .pools import cidr_problems


def workload_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """Every destinationRanges entry is a CIDR block (a NetworkPolicy ipBlock.cidr)."""
    return cidr_problems(
        f"workloads[{i}].egress.destinationRanges", w.egress.destination_ranges, ctx
    )


def downloads_model(w: WorkloadSpec) -> bool:
    """A vLLM server without a modelCache fetches its weights from the Hugging Face Hub at start
    (HTTPS), unless told to stay offline (HF_HUB_OFFLINE, huggingface_hub constants.py)."""
    offline = w.env.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    return is_vllm_image(w.image) and w.model_cache is None and not offline


def internet(w: WorkloadSpec) -> bool:
    """Whether its pods may reach public addresses over HTTPS. A NetworkPolicy selects by
    address, never by host name, so the Hub and Cloud Storage (storage.googleapis.com, read by
    vLLM's streamer or the modelCache's FUSE sidecar inside the pod) both mean HTTPS to public
    addresses; each fetches its Workload Identity token from the GKE metadata server (the
    streamer through Application Default Credentials, rules/streamer.py; gcsfuse uses
    Application Default Credentials unless the driver hands it a token socket:
    GoogleCloudPlatform/gcs-fuse-csi-driver pkg/sidecar_mounter/sidecar_mounter_config.go at
    000a69c0, prepareConfigFile), which the workload's egress admits with a modelCache."""
    hub_adapters = is_vllm_image(w.image) and any(not a.path.startswith("/") for a in w.adapters)
    derived = downloads_model(w) or w.model_cache is not None or hub_adapters
    # workloads[].output: its results go to Cloud Storage the same way, through the sidecar.
    derived = derived or w.output is not None
    return derived if w.egress.internet is None else w.egress.internet


def run_as_user(w: WorkloadSpec) -> int:
    """runAsUser, or the non-root default (defaults.RUN_AS_USER)."""
    return defaults.RUN_AS_USER if w.run_as_user is None else w.run_as_user
