"""`gke-gpu:workloads`: what runs, how it is probed, stored, cached, scaled and exposed."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StringConstraints, model_validator

from .. import formats
from ..rules import vllm
from .base import (
    VLLM_PORT,
    Image,
    K8sName,
    Kind,
    Model,
    Port,
    Rollout,
    Text,
    _pattern,
)
from .batch import Duration, OutputSpec, QueueSpec, Schedule, TimeZone
from .cluster import (
    GpuSpec,
)
from .disks import CacheSpec, ModelCacheSpec, StorageSpec
from .expose import ExposeSpec
from .pools import (
    FallbackSpec,
    WorkloadResourcesSpec,
)


class ProbeSpec(Model):
    # derived: rules/workloads.py (vLLM's /health for a vLLM server, else a TCP probe).
    path: (
        Annotated[str, _pattern(formats.PROBE_PATH), StringConstraints(max_length=1024)] | None
    ) = None
    """HTTP path of the startup, readiness and liveness probes.

    Default: vLLM: `/health`; other images: none (a TCP probe on the port)
    """
    port: Port | None = None
    """Probe port.

    Default: `port`
    """
    startup_seconds: Annotated[int, Field(ge=10, le=7200)] = 1800
    """How long the model may take to load before liveness applies."""


class AutoscaleSpec(Model):
    """Replicas that follow the load: an HPA on a server metric scraped by Managed Service for
    Prometheus, or, with `minReplicas: 0`, KEDA's HTTP add-on, which scales to zero when idle and
    holds the first request while a replica starts (coldstart.py, [Scaling](scaling.md))."""

    min_replicas: Annotated[int, Field(ge=0, le=1000)] = 1
    """Replicas kept with no traffic.

    `0`: the model sleeps after `idleSeconds` without a request and the first request wakes it
    (held at KEDA's interceptor, behind the gate, up to `wakeTimeoutSeconds`); needs `expose`.
    """
    max_replicas: Annotated[int, Field(ge=1, le=1000)]
    """Replicas at the most; the capacity checks and rollouts count this many pods."""
    metric: Annotated[str, StringConstraints(max_length=200)] | None = None
    """The Prometheus gauge the server exports at `/metrics` (HPA; `minReplicas` 1 or more;
    required for other images).

    Default: `vllm:num_requests_waiting` for vLLM images
    """
    target: Annotated[int, Field(ge=1, le=1_000_000)] = 10
    """Per replica: the metric's average (HPA), or requests in flight (`minReplicas: 0`), above
    which a replica is added."""
    idle_seconds: Annotated[int, Field(ge=60, le=86_400)] = 900
    """`minReplicas: 0`: seconds without a request before the replicas go to zero."""
    wake_timeout_seconds: Annotated[int, Field(ge=60, le=3600)] = 1800
    """`minReplicas: 0`: how long a request that finds no replica is held while one starts
    (a GPU node, the image and the weights take minutes); then it is answered 504."""


class AdapterSpec(Model):
    """A LoRA adapter vLLM serves next to the base model (rules/adapters.py)."""

    name: Annotated[str, _pattern(formats.ADAPTER_NAME)]
    """The model name clients ask for (`"model": NAME`); listed in `/v1/models`."""
    path: Annotated[str, _pattern(formats.ADAPTER_PATH)]
    """A Hugging Face repo id (`org/name`, downloaded at start), or an absolute folder under
    `modelCache.mountPath` (the model's bucket: the one folder that holds files at start)."""


class EgressSpec(Model):
    """Where a workload's pods may connect beyond the cluster's DNS (rules/egress.py)."""

    # derived: rules/egress.py.
    internet: bool | None = None
    """HTTPS (TCP 443) to public addresses (everything but RFC 1918, `100.64.0.0/10` and
    link-local).

    Default: on for a vLLM server that downloads its model from the Hugging Face Hub and for
    `modelCache` (Cloud Storage); off for everything else
    """
    destination_ranges: Annotated[list[str], Field(max_length=100)] = []
    """More CIDRs the pods may reach, any port (a model mirror, a database, `0.0.0.0/0` for all).

    Without them a pod reaches DNS only (plus what `internet` and `modelCache` add).
    """


def _number(value: Any) -> Any:
    """`671e9` as YAML 1.1 (PyYAML, the offline plan) reads it, a string, or as YAML 1.2 (the
    Pulumi engine) does, a number: the same value either way."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?", value):
        return float(value)
    return value


class ModelSizeSpec(Model):
    """What the model-fit check (rules/model_fit.py) uses for a model its table does not know."""

    parameters: Annotated[float, BeforeValidator(_number), Field(ge=1e6, le=1e13)]
    """Parameters, e.g. `671e9`."""
    dtype: Literal["bf16", "fp16", "fp32", "fp8", "int8", "int4"] = "bf16"
    """The weights' type as served (a quantized checkpoint: `fp8`, `int4`)."""


class WorkloadSpec(Model):
    name: K8sName
    """Kubernetes name, also the Service's. Not `gke-gpu-gate` (the gates' label), nor one whose
    objects take another workload's (`<name>-model`, `-gate`, ...) or the namespace's names."""
    kind: Kind = "Deployment"
    """What runs the pods."""
    image: Image
    """Container image with a tag or digest.

    A production stack (`cluster.production`) pins it by digest (`name:tag@sha256:...`).
    """
    cuda_version: Annotated[str, _pattern(formats.CUDA_VERSION)] | None = None
    """The CUDA version the image is built for, quoted (`"13.0"`): CUDA 13 needs GKE's `latest`
    driver (R580) and a GPU of compute capability 7.5 or newer.

    Default: from the release table for the vLLM images the plan knows; none otherwise (GKE's
    `default` driver; set it for any other image built for CUDA 13)
    """
    gpu: GpuSpec = GpuSpec(type="nvidia-l4")
    """The GPUs each pod gets.

    `type`: The GPU type the pod runs on; GKE only (existing clusters select GPU nodes with
    `nodeSelector`).

    `count`: GPUs per pod (Autopilot allows per-type counts).
    """
    spot: bool = False
    """Run on Spot capacity (GKE only; Standard: needs a Spot pool)."""
    hosts: Annotated[int, Field(ge=1, le=64)] = 1
    """Nodes per replica, each with `gpu.count` GPUs: more than 1 makes each replica a
    LeaderWorkerSet group (a leader and `hosts - 1` workers that start, restart and scale together)
    for a model bigger than one node.

    GKE Standard and existing clusters; the stack installs the LeaderWorkerSet controller. A vLLM
    server's parallel sizes must cover the group (see [GPUs](gpus.md)).
    """
    replicas: Annotated[int, Field(ge=0, le=1000)] = 1
    """Pods (Deployment, StatefulSet)."""
    model: ModelSizeSpec | None = None
    """The served model's size, for the model-fit check of a model its table does not know.

    Default: from the table of popular models (a vLLM server's model argument)
    """
    command: Annotated[list[Text], Field(max_length=256)] = []
    """Container command. An item holding a credential by its shape is refused, as in `args`.

    Default: the image's
    """
    args: Annotated[list[Text], Field(max_length=256)] = []
    """Container arguments.

    A literal value after a credential flag (`--api-key sk-...`), or any item holding a
    credential by its shape (`--hf-tok hf_...`), is refused: reference an env value instead
    (`--hf-token=$(HF_TOKEN)`). `--trust-remote-code` (here or in `command`) needs
    `--revision <commit>`, the 40 hex characters of the code you reviewed.

    Default: the image's
    """
    env: Annotated[dict[str, Text], Field(max_length=256)] = {}
    """Environment variables; values set with `--path --secret` go into a Kubernetes Secret.

    A plain value named like a credential (`HF_TOKEN`, `DB_PASS`, `BEARER`, `HF_AUTH`) or shaped
    like one (`hf_...`, `sk-...`, ...) is refused (see [Secrets](secrets.md)). An API key of your
    own (`VLLM_API_KEY`, here or in `secretEnv`) needs at least 32 characters.
    """
    secret_env: Annotated[dict[str, str], Field(max_length=256)] = {}
    """Env var name -> secret top-level config key (older form of a secret `env` value)."""
    # derived: 8000 for a vLLM server (its default), else none: say where your server listens
    port: Port | None = None
    """Container port serving HTTP; `null` for none.

    Only a vLLM server's port is known without being told.

    Default: vLLM: its `--port` or `8000`; other images: none
    """
    probe: ProbeSpec | None = ProbeSpec()
    """The startup, readiness and liveness probes; `null` for none.

    The plan prints each workload's probe. A Job gets none, and without a port there is none.
    """
    resources: WorkloadResourcesSpec = WorkloadResourcesSpec()
    """What each pod requests.

    `cpu`: CPU request.
    Default: sized from the node (Standard: 95% of its room; Autopilot); existing cluster: none

    `memory`: Memory request and limit.
    Default: sized from the node (Standard: 95% of its room; Autopilot); existing: `2Gi`, no limit
    """
    storage: StorageSpec | None = None
    """StatefulSet only: a volume claim per pod.

    `HOME` is its mount path (unless `env` sets it), so what lands in ~ (a notebook's ~/.local,
    ~/.jupyter, ~/.cache) survives a restart.
    """
    cache: CacheSpec | None = None
    """A per-pod disk for model weights and compile caches (a generic ephemeral volume).

    Created and deleted with the pod; `XDG_CACHE_HOME` points at it, and `HOME` unless `storage`
    holds it (Hugging Face, vLLM, Triton and FlashInfer follow them). Required for vLLM on
    Autopilot, whose default ephemeral storage is 1 GiB.

    Default: none (the default workload: `{size: 30Gi}`)
    """
    node_selector: Annotated[dict[str, str], Field(max_length=64)] = {}
    """Extra node labels to match.

    Existing clusters: their GPU nodes' label, e.g. `{gpu: "true"}`.
    """
    expose: ExposeSpec | None = None
    """A Service in front of the workload, through its gate (Deployment, StatefulSet).

    Default: none: not exposed (the default workload: `{port: 443}`)
    """
    # derived: defaults.RUN_AS_USER (non-root); the uid and gid every container runs as
    run_as_user: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    """The uid and gid every container runs as (`runAsNonRoot: true`, `fsGroup` the same).

    The workload namespace enforces Pod Security `restricted`, so root is refused. Jupyter's
    docker-stacks images: `1000` (their `jovyan`).

    Default: `10001`
    """
    read_only_root_filesystem: bool = True
    """The container's root filesystem is read-only; `/tmp` and `HOME` stay writable.

    `/tmp` is an emptyDir and `HOME` is the cache disk (`cache`) or an emptyDir at
    `/home/gke-gpu`. `false` for an image that writes elsewhere (e.g. `pip install --user` is
    fine, writing into `/app` is not).
    """
    egress: EgressSpec = EgressSpec()
    """Where the pods may connect beyond the cluster's DNS (egress is denied otherwise)."""
    backoff_limit: Annotated[int, Field(ge=0, le=100)] = 3
    """Job retries."""
    wait_for_completion: bool = False
    """Job only: `pulumi up` waits until the Job completes (and fails if it fails).

    By default it returns once the Job is created.
    """
    active_deadline: Duration | None = None
    """Job only: the longest a run may last, e.g. `4h`, `90m`; Kubernetes then stops its pods and
    fails the Job (`activeDeadlineSeconds`). Spot or not, queued or not.

    Counted from the Job's start: a queued Job's from Kueue's admission, a scheduled Job's per
    run. See [Batch](batch.md).
    """
    queue: QueueSpec | None = None
    """Job only: wait in a Kueue queue until GKE grants all its nodes at once (flex-start with
    queued provisioning on a pool with `queuedProvisioning: true`); Standard clusters.

    See [Batch](batch.md).
    """
    schedule: Schedule | None = None
    """Job only: run it on this cron schedule (a CronJob; a run never overlaps the last), e.g.
    `"0 3 * * *"`.

    Checked as the API server checks it: five fields (minute 0-59, hour 0-23, day of month 1-31,
    month 1-12 or `jan`-`dec`, day of week 0-6 or `sun`-`sat`), steps of 1 or more, or `@hourly`,
    `@daily`, ... `@every 1h`; no `TZ=` (use `timeZone`), on one line.
    """
    time_zone: TimeZone = "UTC"
    """With `schedule`: the IANA time zone it is read in, e.g. `Europe/Berlin`."""
    parallelism: Annotated[int, Field(ge=1, le=1000)] | None = None
    """Job only: shards run at once (with `completions`, an Indexed Job: each pod reads its shard
    from `JOB_COMPLETION_INDEX`).

    Default: 1
    """
    completions: Annotated[int, Field(ge=1, le=10000)] | None = None
    """Job only: shards in all (an Indexed Job of 0 to `completions` - 1).

    Default: one pod, not indexed
    """
    output: OutputSpec | None = None
    """Job only: a Cloud Storage bucket mounted read-write for the results; GKE only.

    Mounted through the Cloud Storage FUSE CSI driver as the workload's own Kubernetes service
    account (Workload Identity), granted on that bucket only.
    """
    rollout: Rollout = "auto"
    """How a change rolls out: an extra pod first (`surge`) or a pod down first (`replace`).

    `surge`: one extra pod at a time, never below `replicas` (needs a spare GPU); `replace`: one
    pod down at a time (`Recreate` for one replica). `auto` surges only where the pool has a spare
    GPU at `maxNodes` (Autopilot: always), and replaces on existing clusters. A StatefulSet never
    surges: Kubernetes replaces its pods one at a time, highest ordinal first.
    """
    fallback: Annotated[list[FallbackSpec], Field(max_length=10)] = []
    """Alternatives GKE tries in order when the workload's own `gpu`/`spot` has no capacity.

    They become one ComputeClass (see [Getting GPUs](getting-gpus.md)); GKE only.
    """
    secondary_boot_disk: Annotated[str, StringConstraints(max_length=1024)] | None = None
    """With `fallback`: a disk image of preloaded container images for the nodes GKE creates
    from the workload's ComputeClass, in every priority (`CONTAINER_IMAGE_CACHE` mode).

    `global/images/NAME` or `projects/P/global/images/NAME`, built with Google's
    gke-disk-image-builder; GKE 1.31.2-gke.1105000 or later. See [Cold starts](cold-starts.md).
    """
    model_cache: ModelCacheSpec | None = None
    """Model weights from a Cloud Storage bucket, mounted read-only; GKE only.

    Mounted through the Cloud Storage FUSE CSI driver as the workload's own Kubernetes service
    account (Workload Identity). See [Cold starts](cold-starts.md).
    """
    autoscale: AutoscaleSpec | None = None
    """Replicas that follow load (Deployment, StatefulSet): an HPA on a server metric (GKE), or
    with `minReplicas: 0` a model that sleeps when idle and wakes on the first request (KEDA;
    GKE and existing clusters).

    Not with `replicas`. See [Scaling](scaling.md).
    """
    adapters: Annotated[list[AdapterSpec], Field(max_length=32)] = []
    """LoRA adapters served by vLLM next to the base model, each under its own model name.

    vLLM images only. Up to 128 / `adapterMaxRank` of them share a batch on the GPU
    (`--max-loras`); the others wait in CPU memory. See [Scaling](scaling.md).
    """
    adapter_max_rank: Literal[1, 8, 16, 32, 64, 128, 256, 320, 512] = 16
    """The largest LoRA rank among `adapters` (vLLM's `--max-lora-rank` choices; its default 16).

    vLLM refuses an adapter of a higher rank at start; a higher value takes more GPU memory.
    """
    # derived: rules/routing.py resolve.
    routing: Literal["cache-aware", "round-robin"] | None = None
    """How the gate spreads requests over the replicas.

    `cache-aware`: the gate sends requests that share a prompt prefix and model (or adapter) to
    the same replica, whose prefix cache holds it, unless that replica already carries 1.5 times
    the average load; `round-robin`: the model's Service spreads them. Needs `expose`; not with
    `autoscale.minReplicas: 0`. See [Scaling](scaling.md).

    Default: `cache-aware` for an exposed Deployment or StatefulSet of 2 or more replicas
    (`replicas` or `autoscale.maxReplicas`) that does not sleep
    """
    api_key: bool | None = None  # derived: rules/exposure.py api_key
    """Generate an API key that the gate requires on every request, and export it.

    The key comes from the workload's Secret; the secret outputs `apiKey` / `apiKeys` hold it.
    The gate checks it whatever the image. The server gets it too, as env `VLLM_API_KEY`: vLLM
    checks it again, another server may read it, take `$(VLLM_API_KEY)` in `args`, or ignore
    it. `false` serves without a key: anyone who reaches the endpoint may call it; refused on a
    public endpoint (`LoadBalancer`, a Gateway) of a production stack. Not for a Job, nor for a
    workload that sets its own key.

    Default: on for every exposed workload that sets no key of its own
    """

    @model_validator(mode="before")
    @classmethod
    def _derived_port(cls, data: Any) -> Any:
        """A vLLM server listens on 8000 unless told otherwise (rules/vllm.py); any other image's
        port is unknown, so none is assumed (no HTTP probe, nothing to expose)."""
        if isinstance(data, dict) and "port" not in data:
            image = data.get("image")
            port = None
            if isinstance(image, str) and formats.is_vllm_image(image):
                args = data.get("args")
                given = (
                    vllm.parse([a for a in args if isinstance(a, str)]).port
                    if isinstance(args, list)
                    else None
                )
                port = given or VLLM_PORT
            return {**data, "port": port}
        return data
