"""Types, formats and the strict base model every spec uses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel

from .. import formats
from ..rules import vllm
from ..variants import EXPOSURE_SPECS, KIND_SPECS

# vLLM's OpenAI server's own default port (rules/vllm.py has the source).
VLLM_PORT = vllm.DEFAULT_PORT
Mode = Literal["standard", "autopilot", "existing"]
MODES: tuple[Mode, ...] = get_args(Mode)
Driver = Literal["default", "latest", "installer"]
ImageType = Literal["COS_CONTAINERD", "UBUNTU_CONTAINERD"]
DevicePluginType = Literal["static", "gpu-operator", "none"]
DEVICE_PLUGIN_TYPES: tuple[DevicePluginType, ...] = get_args(DevicePluginType)
# The stack file's `kind` and `expose.type` choices are the variants' (components/config/
# variants.py lists their descriptors): a new kind or exposure is a choice here without an edit.
# At run time each is a Literal of the descriptors' names in registry order (pydantic's choice and
# its error, the reference, the package's enum); a type checker sees a string, as a Literal's
# arguments cannot be computed. LoadBalancer: external passthrough load balancer; Internal: GKE's
# internal passthrough load balancer (VPC only); ClusterIP: no load balancer, in-cluster only;
# NodePort: existing clusters without a load balancer implementation (rules/exposure.py).
if TYPE_CHECKING:
    Kind = str
    ExposeType = str
else:
    Kind = Literal[tuple(dict.fromkeys(k.stack_kind for k in KIND_SPECS.values()))]
    ExposeType = Literal[tuple(EXPOSURE_SPECS)]
# Who may use GKE's DNS-based control-plane endpoint (components/platform/cluster.py has the
# source).
DnsEndpoint = Literal["disabled", "external"]
# auto: surge where the pool has a spare GPU at its maximum, else replace (see rules/fit.py).
Rollout = Literal["auto", "surge", "replace"]


def _pattern(pattern: str) -> StringConstraints:
    # pydantic matches with Rust's regex, where `$` is the end of the text (no trailing newline).
    return StringConstraints(pattern=f"^(?:{pattern})$")


GkeName = Annotated[str, _pattern(formats.GKE_NAME)]
K8sName = Annotated[str, _pattern(formats.K8S_NAME)]
CpuQuantity = Annotated[str, _pattern(formats.CPU_QUANTITY)]
MemoryQuantity = Annotated[str, _pattern(formats.MEMORY_QUANTITY)]
Zone = Annotated[str, _pattern(formats.ZONE)]
LabelValue = Annotated[str, _pattern(formats.LABEL_VALUE)]
Image = Annotated[str, _pattern(formats.IMAGE), StringConstraints(max_length=512)]
AbsolutePath = Annotated[str, _pattern(formats.ABSOLUTE_PATH), StringConstraints(max_length=1024)]
Text = Annotated[str, StringConstraints(max_length=4096)]
Port = Annotated[int, Field(ge=1, le=65535)]
NetworkRef = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
GceName = Annotated[str, StringConstraints(min_length=1, max_length=63)]


class Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=False,
        extra="forbid",
        frozen=True,
        strict=True,
        hide_input_in_errors=True,
        # Documentation only: each field's docstring becomes its description (tools/reference/).
        use_attribute_docstrings=True,
    )
