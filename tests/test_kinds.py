"""How a workload runs (components/kinds/, listed in components/slices.py): each kind registers
its own object, and a kind the registry does not hold is refused, never built as another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components import slices
from tools.engine import Recording, run_program

# A program that builds one GpuWorkload of the given kind from a loaded Autopilot stack: the
# loaded config's kind is replaced afterwards, as a caller bypassing the schema (or a kind added
# to the schema but not to the registry) would hand it over; a kind that serves a stack kind
# under another name (CronJob: a Job with `schedule`; LeaderWorkerSet: a Deployment with `hosts`)
# gets what it serves.
PROGRAM = """\
import dataclasses
from components.config import load
from components.service.workload import GpuWorkload, GpuWorkloadArgs
raw = {"cluster": {"mode": "autopilot"}, "workloads": [
    {"name": "train", "kind": "Job", "image": "nvcr.io/nvidia/pytorch:24.01-py3",
     "gpu": {"type": "nvidia-l4", "count": 1}}]}
config = load(raw, project="acme-ml-test", region="us-central1", stack="t")
from components import slices
kind = slices.KINDS.get(KIND_NAME)
def respec(w, **changes):
    return dataclasses.replace(w, spec=w.spec.model_copy(update=changes))
w = respec(config.workloads[0], kind=(kind.stack_kind or kind.name) if kind else KIND_NAME)
if kind is not None and not kind.serves(w):
    # What tells a kind from another of the same stack kind: a CronJob is a Job with a schedule,
    # a LeaderWorkerSet a Deployment whose replica spans nodes.
    refined = {"Job": {"schedule": "0 3 * * *"}, "Deployment": {"hosts": 2}}
    w = respec(w, **refined[w.spec.kind])
GpuWorkload("workload-train", GpuWorkloadArgs(namespace="ns", mode=config.cluster.mode, workload=w))
"""


def workload_of_kind(tmp_path: Path, kind: str) -> Recording:
    program = tmp_path / "program.py"
    program.write_text(PROGRAM.replace("KIND_NAME", json.dumps(kind)))
    return run_program({}, program=program)


def test_a_kind_the_registry_does_not_hold_is_refused_not_built_as_a_job(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"kind 'DaemonSet' is not one the program can register"
    ) as e:
        recording = workload_of_kind(tmp_path, "DaemonSet")
        built = sorted({r.type for r in recording.resources})
        pytest.fail(f"an unknown kind was built as {built}: it must be refused, naming the kinds")
    for kind in slices.KINDS:
        assert kind in str(e.value), f"the error must name the kinds there are: {e.value}"


@pytest.mark.parametrize("name", sorted(slices.KINDS))
def test_each_kind_registers_its_own_object_under_the_workload(tmp_path: Path, name: str) -> None:
    kind = slices.KINDS[name]
    recording = workload_of_kind(tmp_path, name)
    objects = recording.of_type(kind.type_token)
    assert [r.name for r in objects] == [f"workload-train-{name.lower()}"], (
        f"a {name} workload must register one {kind.type_token} named "
        "workload-<name>-<kind> (URNs are a contract)"
    )
    inputs = objects[0].inputs
    pod = inputs
    for key in kind.pod_spec_path:
        pod = pod[key]
    assert pod["containers"][0]["name"], (
        f"{name}: the pod spec must sit at {kind.pod_spec_path}, where the policy pack looks"
    )
    others = {k.type_token for k in slices.KINDS.values()} - {kind.type_token}
    assert not [r.name for r in recording.resources if r.type in others], (
        f"a {name} workload registered another kind's object"
    )
