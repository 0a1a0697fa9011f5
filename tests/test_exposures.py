"""How a workload is reached (components/expose/, listed in components/slices.py EXPOSURES): an
expose type the registry does not hold is refused with the types there are, never registered as
another type's Service nor described in the plan as one."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path

import pytest

from components import slices
from components.config import load
from components.config.schema import ExposeType
from tools.engine import Recording, run_program
from tools.summary_exposure import exposure_lines

# A program that registers one workload's LoadBalancerService with the given expose type, as a
# caller bypassing the schema (or a type added to the schema but not to the registry) would.
PROGRAM = """\
from components.service.load_balancer import LoadBalancerService, LoadBalancerServiceArgs
LoadBalancerService("service-llm", LoadBalancerServiceArgs(
    name="llm", namespace="ns", selector={"app": "llm"}, port=443, target_port=8443, type=TYPE))
"""
UNKNOWN = "Gateway"
REFUSED = rf"expose.type '{UNKNOWN}' is not one the program can register"


def service_of_type(tmp_path: Path, type_: str) -> Recording:
    program = tmp_path / "program.py"
    program.write_text(PROGRAM.replace("TYPE", json.dumps(type_)))
    return run_program({}, program=program)


def test_an_expose_type_the_registry_does_not_hold_is_refused_not_registered(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match=REFUSED) as e:
        recording = service_of_type(tmp_path, UNKNOWN)
        specs = [r.inputs.get("spec") for r in recording.resources if r.type.endswith("Service")]
        pytest.fail(f"an unknown expose type was registered as {specs}: it must be refused")
    for name in slices.EXPOSURES:
        assert name in str(e.value), f"the error must name the types there are: {e.value}"


def test_the_plan_refuses_an_expose_type_it_cannot_describe() -> None:
    raw = {
        "cluster": {"mode": "autopilot"},
        "workloads": [
            {
                "name": "llm",
                "image": "vllm/vllm-openai:v0.29.0",
                "cache": {"size": "30Gi"},
                "expose": {},
            }
        ],
    }
    config = load(raw, project="acme-ml-test", region="us-central1", stack="t")
    w = config.workloads[0]
    assert w.expose is not None
    unknown = w.expose.spec.model_copy(update={"type": UNKNOWN})
    w = dataclasses.replace(w, expose=dataclasses.replace(w.expose, spec=unknown))
    with pytest.raises(ValueError, match=REFUSED):
        exposure_lines(config, w)


@pytest.mark.parametrize("name", sorted(slices.EXPOSURES))
def test_each_expose_type_registers_its_own_service_type(tmp_path: Path, name: str) -> None:
    exposure = slices.EXPOSURES[name]
    service = service_of_type(tmp_path, name).served("kubernetes:core/v1:Service").inputs
    assert service["spec"]["type"] == exposure.service_type, (
        f"expose.type {name} must register a Service of type {exposure.service_type}"
    )
    assert service["metadata"].get("annotations", {}) == exposure.annotations, (
        f"expose.type {name}: the Service's annotations decide which load balancer GKE makes"
    )


def test_the_registry_holds_every_type_the_schema_allows():
    """What the config layer and the registered exposure know of a type is one descriptor
    (components/expose/<type>_spec.py; tests/test_variants.py holds the registry to them)."""
    assert set(slices.EXPOSURES) == set(typing.get_args(ExposeType)), (
        "a type the schema accepts but the registry lacks would be refused at `pulumi up`; one "
        "the registry holds but the schema refuses is dead code"
    )
