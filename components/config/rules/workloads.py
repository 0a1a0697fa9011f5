"""Workload rules: GPUs per mode, placement on pools, exposure, probes, env and secrets."""

from __future__ import annotations

from collections.abc import Iterator

from ...facts import allocatable, catalog
from .. import formats
from ..context import HIDDEN_KEY, Context
from ..model import NAMESPACE
from ..problems import Problem
from ..schema import WorkloadSpec
from ..variants import exposure_spec, kind_spec, kinds_that
from . import vllm
from .pools import cidr_problems, gpu_type_problems

# Node labels the program sets itself to place GPU pods (GKE's docs: how-to/gpus, autopilot-gpus,
# timesharing-gpus, gpus-multi, spot-vms, custom compute classes). A user's nodeSelector with one
# of these keys would silently move the pod off the capacity the program chose for it.
PROGRAM_SELECTORS = (
    "cloud.google.com/gke-accelerator",
    "cloud.google.com/gke-accelerator-count",
    "cloud.google.com/gke-nodepool",
    "cloud.google.com/gke-spot",
    "cloud.google.com/gke-gpu-sharing-strategy",
    "cloud.google.com/gke-max-shared-clients-per-gpu",
    "cloud.google.com/gke-gpu-partition-size",
    "cloud.google.com/gke-gpu-driver-version",
    "cloud.google.com/compute-class",
)
# Upper bounds no single GPU pod can exceed on any GKE machine (a4x/a3-ultragpu are the largest
# shapes, below 1,000 vCPUs and 16 TiB); larger values are typos, not requests.
MAX_CPU = 1000
MAX_MEMORY = 16 * 2**40


def _quantity_problems(path: str, w: WorkloadSpec) -> Iterator[Problem]:
    """CPU and memory quantities within what a GPU pod can have (the suffix forgotten, a typo)."""
    cpu = w.resources.cpu
    if cpu is not None and not 0 < allocatable.parse_cpu(cpu) <= MAX_CPU * 1000:
        yield Problem(
            f"{path}.resources.cpu",
            f"{cpu!r} is out of range: request more than 0 and at most {MAX_CPU} cores.",
        )
    for key, memory in (
        ("resources.memory", w.resources.memory),
        ("cache.size", w.cache.size if w.cache else None),
        ("storage.size", w.storage.size if w.storage else None),
        ("resources.ephemeralStorage", w.resources.ephemeral_storage),
    ):
        if memory is not None and not 2**20 <= allocatable.parse_memory(memory) <= MAX_MEMORY:
            yield Problem(
                f"{path}.{key}",
                f"{memory!r} is out of range: request at least 1Mi and at most "
                "16Ti (and mind the suffix: '16Gi', not '16').",
            )


def basic_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """GPUs, resource quantities, a vLLM server's arguments, and settings its kind ignores."""
    path = f"workloads[{i}]"
    mode = ctx.mode
    # On an existing cluster gpu.type is rejected outright (existing_workload_problems).
    yield from [] if ctx.existing else gpu_type_problems(f"{path}.gpu.type", w.gpu.type, ctx)
    yield from _quantity_problems(path, w)
    if formats.is_vllm_image(w.image):
        yield from vllm.problems(
            path,
            vllm.server_args(w.command, w.args),
            w.gpu.count,
            w.port,
            w.hosts,
            _most_per_node(w.gpu.type),
        )
    if w.wait_for_completion and not kind_spec(w).completes:
        yield Problem(
            f"{path}.waitForCompletion",
            f"only a {kinds_that(lambda k: k.completes)} completes; a {w.kind} is waited for until "
            "it is ready anyway. Remove waitForCompletion.",
        )
    if w.gpu.type is None and mode != "existing":
        yield Problem(
            f"{path}.gpu.type",
            "required on GKE (it picks the node's accelerator). Set it, e.g. 'nvidia-l4'.",
        )
    if (
        mode == "autopilot"
        and w.cache is None
        and w.model_cache is None
        and w.resources.ephemeral_storage is None
        and formats.is_vllm_image(w.image)
    ):
        yield Problem(
            f"{path}.cache",
            "the model server downloads its weights into the container's "
            "filesystem, and Autopilot requests 1 GiB of ephemeral storage for it by default "
            "(autopilot-resource-requests): the pod would be evicted mid-download. Add "
            "cache: {size: 30Gi} (a per-pod disk for the weights), or request the space in the "
            "container's filesystem with resources.ephemeralStorage.",
        )
    if w.storage is not None and not kind_spec(w).claims_storage:
        yield Problem(
            f"{path}.storage",
            f"only a StatefulSet gets a volume claim, and kind is {w.kind}. "
            "Set kind: StatefulSet or remove storage.",
        )


def expose_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    path = f"workloads[{i}]"
    if w.expose is None:
        return
    if not kind_spec(w).serves_http:
        yield Problem(
            f"{path}.expose",
            f"a {w.kind} runs to completion and cannot serve traffic. "
            f"Use kind {kinds_that(lambda k: k.serves_http)}, or remove expose.",
        )
    if w.port is None:
        yield Problem(
            f"{path}.expose",
            "the workload has no port to expose (only a vLLM server's port, 8000, is known "
            "without being told). Set port to where the server listens.",
        )
    yield from cidr_problems(f"{path}.expose.sourceRanges", w.expose.source_ranges, ctx)
    exposure = exposure_spec(w.expose.type)
    if exposure.refused_on_gke is not None and not ctx.existing:
        yield Problem(f"{path}.expose.type", exposure.refused_on_gke)
    elif exposure.refuses_source_ranges is not None and w.expose.source_ranges:
        yield Problem(f"{path}.expose.sourceRanges", exposure.refuses_source_ranges)


def probe_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    path = f"workloads[{i}]"
    probe_set = "probe" in w.model_fields_set
    if probe_set and w.probe is not None and w.port is None and w.probe.port is None:
        yield Problem(
            f"{path}.probe",
            "an HTTP probe needs a port. Set port (or probe.port), or set probe: null.",
        )
    if kind_spec(w).completes and w.probe is not None and probe_set:
        yield Problem(
            f"{path}.probe",
            f"a {w.kind} runs to completion and gets no readiness probe (nothing routes traffic "
            "to it). Remove probe.",
        )


def env_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    path = f"workloads[{i}]"
    for field, names in (("env", w.env), ("secretEnv", w.secret_env)):
        for key in names:
            if not formats.matches(formats.ENV_NAME, key):
                hidden = ctx.hides_keys(f"{path}.{field}")
                what = f"{HIDDEN_KEY} " if hidden else ""
                where = ctx.key_path(f"{path}.{field}", key)
                yield Problem(where, what + formats.hint(formats.ENV_NAME))
    for key in set(w.env) & set(w.secret_env):
        yield Problem(
            f"{formats.join(path + '.env', key)}", "also set in secretEnv. Keep one of them."
        )
    for env_name, key in w.secret_env.items():
        where = formats.join(path + ".secretEnv", env_name)
        if not formats.matches(formats.CONFIG_KEY, key):
            yield Problem(where, f"{ctx.show(where, key)} {formats.hint(formats.CONFIG_KEY)}")
        elif key not in ctx.secret_keys:
            named = "<key>" if ctx.is_secret(where) else key
            yield Problem(
                f"{where}",
                f"config key {ctx.show(where, key)} is not set as a secret (a value stored in "
                "plain text would leak into the stack file and state). Run `pulumi config set "
                f"--path --secret '{NAMESPACE}:workloads[{i}].env.{env_name}' <value>` instead "
                f"(or `pulumi config set --secret {NAMESPACE}:{named} <value>`).",
            )


def selector_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    path = f"workloads[{i}].nodeSelector"
    for key, value in w.node_selector.items():
        where = formats.join(path, key)
        if not formats.matches(formats.LABEL_KEY, key) or len(key) > 317:
            hidden = ctx.hides_keys(path)
            where = ctx.key_path(path, key)
            what = f"{HIDDEN_KEY} " if hidden else ""
            yield Problem(where, what + formats.hint(formats.LABEL_KEY))
        elif key in PROGRAM_SELECTORS and not ctx.existing:
            yield Problem(
                f"{where}",
                "the program sets this node label itself (from gpu, spot and the node "
                "pool), and overriding it would move the pod off its GPU capacity. Remove it "
                "and set gpu/spot instead.",
            )
        if not formats.matches(formats.K8S_LABEL_VALUE, value):
            yield Problem(
                f"{where}", f"{ctx.show(where, value)} {formats.hint(formats.K8S_LABEL_VALUE)}"
            )


def existing_workload_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """Workload settings that mean something only on GKE, and the time-slicing rule."""
    if not ctx.existing:
        return
    path, plugin = f"workloads[{i}]", ctx.device_plugin
    if "gpu" in w.model_fields_set and w.gpu.type is not None:
        yield Problem(
            f"{path}.gpu.type",
            f"{w.gpu.type!r} names a GKE accelerator, but an existing "
            "cluster's nodes carry no GKE labels, so it would select nothing. Remove gpu.type "
            f'and select the GPU nodes with {path}.nodeSelector (e.g. {{gpu: "true"}}).',
        )
    if w.spot:
        yield Problem(
            f"{path}.spot",
            f"Spot is GKE capacity; an existing cluster has no such nodes to "
            f"select. Remove spot, or select the nodes you mean with {path}.nodeSelector.",
        )
    if plugin is not None and plugin.sharing_replicas is not None and w.gpu.count > 1:
        yield Problem(
            f"{path}.gpu.count",
            f"{w.gpu.count} GPUs, but devicePlugin.sharing time-slices the "
            "GPUs and the plugin fails any container that asks for more than 1 shared GPU "
            "(failRequestsGreaterThanOne). Set gpu.count to 1, or remove devicePlugin.sharing.",
        )


def _most_per_node(gpu_type: str | None) -> int:
    """The most GPUs of the type one GKE machine carries (16 where the type is unknown: an
    existing cluster's, whose nodes the catalog does not know)."""
    gpu = catalog.GPU_TYPES.get(gpu_type or "")
    return max(gpu.node_counts) if gpu is not None and gpu.node_counts else 16


# GKE's own StorageClasses, all Persistent Disk ones: standard-rwo (pd-balanced, the default on
# GKE clusters), premium-rwo (pd-ssd) and standard (pd-standard). Their names and types are as
# widely used on GKE; no Google page stating them was read this session (unconfirmed).
GKE_PD_CLASSES = ("standard-rwo", "premium-rwo", "standard")


def hyperdisk_only_gpus(w: WorkloadSpec) -> list[str]:
    """The GPUs (display names) of the workload and its fallbacks whose machines attach only
    Hyperdisk volumes (A3 Ultra, A4, A4X, G4: components/facts/catalog/machines.py)."""
    gpus = [w.gpu.type, *(f.gpu.type for f in w.fallback if f.gpu is not None)]
    return sorted(
        {
            gpu.display_name
            for gpu in (catalog.GPU_TYPES.get(g or "") for g in gpus)
            if gpu is not None and not any(m.pd_volumes for m in gpu.machine_types)
        }
    )


def cache_disk_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """A cache disk from a Persistent Disk class where the workload's GPUs run on machines that
    attach only Hyperdisk volumes (hyperdisk_only): the pod would wait for ever for a volume that
    cannot attach."""
    if ctx.existing or w.cache is None or w.cache.storage_class not in (None, *GKE_PD_CLASSES):
        return
    if not (hyperdisk_only := hyperdisk_only_gpus(w)):
        return
    named = w.cache.storage_class or "unset: the cluster's default class, standard-rwo"
    yield Problem(
        f"workloads[{i}].cache.storageClass",
        f"is {named} (a Persistent Disk class), and the {', '.join(hyperdisk_only)} "
        "machines attach only Hyperdisk volumes, so the cache disk would never attach. Set it "
        "to a StorageClass with parameters.type: hyperdisk-balanced (create one as in GKE's "
        "https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/hyperdisk; "
        "it must exist before the pods start), or replace cache with "
        "resources.ephemeralStorage (space in the container's filesystem, on the node's own disk).",
    )
