"""Value formats (names, quantities, images, labels) and how values and key paths are shown."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..facts.allocatable import Resources

# Every pattern is matched with re.fullmatch and ASCII-only classes: `\d` and `$` would accept
# non-ASCII digits and a trailing newline.

# GKE cluster and node pool names: lowercase letters, digits and hyphens, starting with a letter,
# ending with a letter or digit, at most 40 characters (`gcloud container clusters create --help`).
GKE_NAME = r"[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?"
# Workload names also name their Service, so they follow RFC 1035 labels (Kubernetes Service rule).
K8S_NAME = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
# Label values in Kubernetes and GCE: at most 63 of [a-z0-9_-] here (GCE is the stricter one).
LABEL_VALUE = r"[a-z0-9](?:[-_a-z0-9]{0,61}[a-z0-9])?"
ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
CONFIG_KEY = r"[A-Za-z][A-Za-z0-9_.-]{0,99}"
CPU_QUANTITY = r"(?:[0-9]+(?:\.[0-9]+)?|[0-9]+m)"
MEMORY_QUANTITY = r"[0-9]+(?:\.[0-9]+)?(?:Ki|Mi|Gi|Ti|k|M|G|T)?"
ZONE = r"[a-z]+-[a-z]+[0-9]+-[a-z]"
REGION = r"[a-z]+-[a-z]+[0-9]+"
# A folder in the container. It lands in env values and args (HF_HOME, vLLM's model argument),
# where Kubernetes expands `$(NAME)` from the container's env (Container.args/env in the API
# reference: "Variable references $(VAR_NAME) are expanded"), so a "$" could pull the API key into
# a path a log prints: letters, digits and "._~+@=,:/-" only.
ABSOLUTE_PATH = r"/[A-Za-z0-9._~+@=,:/-]*"
# An HTTP path kubelet's probes and the gate's health checks request (haproxy.cfg: `http-check send
# uri`): RFC 3986 path characters and a query, anything else percent-encoded. No quote, "$", "#",
# backslash or space, which haproxy.cfg would read as syntax (`/health?x="${GATE_API_KEY}"` would
# put the key in every check); components/service/haproxy_syntax.py quotes it as well.
_PCHAR = r"(?:[A-Za-z0-9._~!&()*+,;=:@-]|%[0-9A-Fa-f]{2})"
PROBE_PATH = rf"/(?:{_PCHAR}|/)*(?:\?(?:{_PCHAR}|[/?])*)?"
# Google Cloud project ids: 6-30 lowercase letters, digits and hyphens, starting with a letter,
# not ending with a hyphen (cloud.google.com/resource-manager/docs/creating-managing-projects,
# "Before you begin"); legacy domain-scoped ids carry a `domain:` prefix.
PROJECT_ID = r"(?:[a-z][-a-z0-9.]{0,61}[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]"
# Kubernetes label keys (apimachinery validation.IsQualifiedName): optional DNS-subdomain prefix
# and '/', then a name of at most 63 characters; values at most 63, possibly empty.
_LABEL_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_KEY = rf"(?:[a-z0-9](?:[-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}"
K8S_LABEL_VALUE = rf"(?:{_LABEL_NAME})?"
# Container image references: the grammar of distribution/reference (reference.go, regexp.go):
# [domain[:port]/]path-component[/path-component...][:tag][@digest]
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
# A first component is a registry only when it looks like a host: it has a dot or a port, or is
# localhost (distribution/reference normalize.go splitDockerDomain); otherwise it is a lowercase
# path component, so `VLLM/vllm-openai` is refused as Docker refuses it.
_DOMAIN = (
    rf"(?:localhost(?::[0-9]+)?|{_DOMAIN_PART}(?:\.{_DOMAIN_PART})+(?::[0-9]+)?"
    rf"|{_DOMAIN_PART}:[0-9]+|\[[0-9a-fA-F:]+\](?::[0-9]+)?)"
)
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
IMAGE = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*(?::{_TAG})?(?:@{_DIGEST})?"

# The CUDA version an image is built for (rules/drivers.py): MAJOR.MINOR, as NVIDIA numbers them.
CUDA_VERSION = r"[0-9]{1,2}\.[0-9]{1,2}"

# A LoRA adapter (rules/adapters.py): its model name, and `name=path` for vLLM's --lora-modules,
# which cannot hold a comma, a space or "=" there, nor a "$" (Kubernetes expands `$(NAME)` in args).
ADAPTER_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
ADAPTER_PATH = r"[A-Za-z0-9._~+@:/-]{1,1024}"

# An RFC 3339 time in UTC, to the second (`2026-01-03T01:00:00Z`): what GKE answers for maintenance
# times (schema/cluster.py UtcTime says why no other offset).
UTC_TIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"

# A consumer of an endpoint (expose.keys, issue 35): it names a key's resource, its stack output
# key, the gate's environment variable (upper-cased, '-' as '_': one-to-one since '_' is not
# allowed) and the gate's log line (a capture of at most 32 characters).
CONSUMER = r"[a-z](?:[-a-z0-9]{0,30}[a-z0-9])?"
# A DNS name of two or more labels, lowercase (expose.domain; a certificate's name).
DOMAIN_NAME = r"(?:[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
# expose.domain: your name, or `auto` for a Cloud Endpoints name the stack makes.
DOMAIN = rf"auto|{DOMAIN_NAME}"
HINTS: dict[str, str] = {
    CONSUMER: "is not a consumer name: use 1-32 lowercase letters, digits and hyphens, starting "
    "with a letter and ending with a letter or digit (e.g. 'web-app').",
    DOMAIN: "is not a domain: use a lowercase DNS name of two or more labels (e.g. "
    "'llm.acme.example'), or 'auto' for a name under endpoints.<project>.cloud.goog.",
    CUDA_VERSION: "is not a CUDA version: use MAJOR.MINOR as a quoted string (e.g. '13.0'; a "
    "bare 13.0 is a YAML number).",
    UTC_TIME: "is not a UTC time: use RFC 3339 in UTC to the second, ending in Z (e.g. "
    "'2026-01-03T01:00:00Z').",
    ADAPTER_NAME: "is not an adapter name: use 1-100 letters, digits, '.', '_' and '-', starting "
    "with a letter or digit (e.g. 'sql-lora').",
    ADAPTER_PATH: "is not an adapter path: use a Hugging Face repo id or an absolute folder, "
    "of letters, digits and '._~+@:/-' only (e.g. 'org/sql-lora' or '/models/adapters/sql').",
    GKE_NAME: "is not a valid GKE name: use 1-40 lowercase letters, digits and hyphens, "
    "starting with a letter and ending with a letter or digit (e.g. 'gpu-l4').",
    K8S_NAME: "is not a valid Kubernetes name: use 1-63 lowercase letters, digits and hyphens, "
    "starting with a letter and ending with a letter or digit (e.g. 'llm').",
    LABEL_VALUE: "is not a valid label value: use 1-63 lowercase letters, digits, '-' and '_' "
    "(e.g. 'latency-slo').",
    ENV_NAME: "is not a valid environment variable name: use letters, digits and '_', "
    "not starting with a digit (e.g. 'HF_TOKEN').",
    CONFIG_KEY: "is not a valid config key: name the key you set with "
    "`pulumi config set --secret gke-gpu:<key> ...` (letters, digits, '_', '-', '.').",
    CPU_QUANTITY: "is not a CPU quantity: use cores ('4', '0.5') or millicores ('500m').",
    MEMORY_QUANTITY: "is not a memory quantity: use a number with a binary suffix "
    "('16Gi', '512Mi').",
    ZONE: "is not a zone name: use the form 'us-central1-a'.",
    ABSOLUTE_PATH: "is not an absolute path of plain characters: start it with '/' and use "
    "letters, digits and '._~+@=,:/-' only (no '$', quote or space: Kubernetes expands $(NAME) "
    "in the env and args the path lands in) (e.g. '/data').",
    PROBE_PATH: "is not an HTTP path a probe can request: start it with '/' and use letters, "
    "digits, '-._~!&()*+,;=:@/' and a query after '?', anything else percent-encoded (%XX); no "
    "quote, '$', '#', backslash or space, which the gate would read as syntax in haproxy.cfg "
    "(e.g. '/health').",
    IMAGE: "is not a container image reference: use [registry/]repository[:tag][@digest] in "
    "lowercase without spaces (e.g. 'vllm/vllm-openai:v0.11.0').",
    LABEL_KEY: "is not a Kubernetes label key: use [prefix/]name, the name at most 63 letters, "
    "digits, '-', '_' or '.' (e.g. 'gpu' or 'example.com/gpu').",
    K8S_LABEL_VALUE: "is not a Kubernetes label value: at most 63 letters, digits, '-', '_' or "
    "'.', starting and ending with a letter or digit.",
    PROJECT_ID: "is not a Google Cloud project id: 6-30 lowercase letters, digits and hyphens, "
    "starting with a letter (e.g. 'acme-ml-dev'). Use the project id, not its name or number.",
}


def image_parts(image: str) -> tuple[str, str, str | None]:
    """(name, tag, digest) of an image reference: `vllm/vllm-openai:v1@sha256:ab` ->
    (`vllm/vllm-openai`, `v1`, `sha256:ab`); a missing tag is ''."""
    reference, at, digest = image.partition("@")
    name, colon, tag = reference.rpartition(":")
    if not colon or "/" in tag:
        name, tag = reference, ""
    return name, tag, digest if at else None


def vllm_tag(image: str) -> str | None:
    """The tag of a vLLM OpenAI server image (Docker Hub or any mirror), else None."""
    name, tag, _ = image_parts(image)
    return tag if name.rsplit("/", 1)[-1] == "vllm-openai" else None


def is_vllm_image(image: str) -> bool:
    return vllm_tag(image) is not None


def matches(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern, value, flags=re.ASCII) is not None


def hint(pattern: str) -> str:
    return HINTS.get(pattern, "has the wrong format.")


# --- CPU and memory as messages and the summary show them -----------------------------------------
# (Quantities are read by components/facts/allocatable.py parse_cpu and parse_memory, as Kubernetes
# does.)


def cpu(millicores: int, places: int | None = None) -> str:
    """'3.92 CPU': the cores in as few digits as they take, or rounded to `places` decimals."""
    cores = millicores / 1000
    return (f"{cores:g}" if places is None else f"{cores:.{places}f}".rstrip("0").rstrip(".")) + (
        " CPU"
    )


def gib(memory_bytes: int) -> str:
    return f"{memory_bytes / 2**30:.1f} GiB"


def resources(r: Resources, places: int | None = None) -> str:
    """'4 CPU / 16.0 GiB'."""
    return f"{cpu(r.cpu_millicores, places)} / {gib(r.memory_bytes)}"


# --- key paths and values in messages -------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*", re.ASCII)


def join(base: str, part: int | str) -> str:
    """`base` extended by a list index or a map key, keys quoted as written when not plain."""
    if isinstance(part, int):
        return f"{base}[{part}]"
    if not _BARE_KEY.fullmatch(part):
        return f"{base}[{part!r}]"
    return f"{base}.{part}" if base else part


_PART = re.compile(
    r"\.?([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\]"
)


def split(path: str) -> list[str | int]:
    """The parts `join` made a key path of: `workloads[0].env['A.B']` -> workloads, 0, env, A.B."""
    parts: list[str | int] = []
    for match in _PART.finditer(path):
        name, index, quoted = match.groups()
        parts.append(int(index) if index else ast.literal_eval(quoted) if quoted else name)
    return parts


MAX_SHOWN = 60


def show(value: object) -> str:
    """A value as a message shows it: its repr, cut to MAX_SHOWN characters."""
    text = repr(value)
    return (
        text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 5] + "...'" + f" ({len(text)} chars)"
    )


# A path pattern of expose.paths, as the gate (components/service/haproxy.py) matches it: an exact
# path, or a prefix ending in "/*". Letters, digits and "-._~/" only (RFC 3986 unreserved
# characters and "/"): no "%", so no encoded "/" or ".", and the config layer refuses "..", "//"
# and a trailing dot (rules/exposure.py).
# Each "/" ends a segment, so a value is read one way only: `(?:[...]+/?)*` could split a run of
# letters into segments in exponentially many ways, and "/aaa...a !" took minutes to refuse.
GATE_PATH = r"/(?:[A-Za-z0-9._~-]+/)*[A-Za-z0-9._~-]*\*?"
