"""One fact, one name: every label, annotation and taint key lives in components/facts/labels.py.

The policy pack cannot import components/ (its venv has no pulumi_gcp), so it keeps its own copies
in policy/rules/props.py; these tests keep the copies equal to the originals, and keep the
components from spelling a key themselves.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from components import slices
from components.config.rules import names
from components.config.rules.workloads import PROGRAM_SELECTORS
from components.facts import labels
from policy.rules import props
from tests.conftest import ROOT
from tests.shared import render

# Names the policy pack repeats from components/facts/labels.py.
SHARED = (
    "GPU_RESOURCE",
    "ACCELERATOR_LABEL",
    "MIN_NODES_REASON_LABEL",
    "APP_NAME_LABEL",
    "INTERNAL_LB_ANNOTATION",
    "GATE_NAME_LABEL",
    "PRODUCTION_LABEL",
    "PRODUCTION_CLUSTER_LABEL",
)
# The node labels the program selects GPU capacity by (components/service/placement.py).
PLACEMENT_LABELS = (
    labels.ACCELERATOR_LABEL,
    labels.SPOT_LABEL,
    labels.COMPUTE_CLASS_LABEL,
    labels.DRIVER_VERSION_LABEL,
    labels.NODEPOOL_LABEL,
    labels.GPU_SHARING_STRATEGY_LABEL,
    labels.MAX_SHARED_CLIENTS_LABEL,
    labels.GPU_PARTITION_SIZE_LABEL,
)
# What a label or annotation key of GKE's, Kubernetes' or ours looks like.
KEY = re.compile(
    r"^(cloud\.google\.com/(gke-|compute-class)|gke-gpu[/-]|app\.kubernetes\.io/"
    r"|pod-security\.kubernetes\.io/|topology\.kubernetes\.io/|kubernetes\.io/(hostname|metadata)"
    r"|networking\.gke\.io/|gke-gcsfuse/|pulumi\.com/|nvidia\.com/gpu$)"
)
# The config layer and the catalog keep their own lists (see components/facts/labels.py).
NOT_CHECKED = ("components/config/", "components/facts/catalog/")


def _key_literals(path: Path) -> list[str]:
    """The string constants in a module that look like a label, annotation or taint key."""
    return [
        node.value
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY.match(node.value)
    ]


def _component_modules() -> list[Path]:
    return [
        path
        for path in sorted((ROOT / "components").rglob("*.py"))
        if path.name != "labels.py" and not str(path.relative_to(ROOT)).startswith(NOT_CHECKED)
    ]


def test_the_policy_pack_uses_the_programs_keys() -> None:
    for name in SHARED:
        assert getattr(props, name) == getattr(labels, name), (
            f"policy/rules/props.py {name} drifted from components/facts/labels.py: the pack would "
            "look for a key the program no longer writes"
        )


def test_every_key_the_policy_pack_names_is_shared() -> None:
    named = {
        name
        for name in vars(props)
        if name.endswith(("_LABEL", "_ANNOTATION")) or name == "GPU_RESOURCE"
    }
    assert named == set(SHARED), (
        f"{sorted(named - set(SHARED))}: a key the pack names must be one of "
        "components/facts/labels.py "
        "and listed in SHARED, so this test keeps the two equal"
    )


def test_no_component_spells_a_key_itself() -> None:
    modules = _component_modules()
    assert len(modules) > 20, f"found only {len(modules)} modules: the check would pass unseen"
    spelled = {
        f"{path.relative_to(ROOT)}: {value}" for path in modules for value in _key_literals(path)
    }
    assert not spelled, (
        f"{sorted(spelled)}: import the key from components/facts/labels.py (add it there, "
        "with its "
        "source), so that one fact has one name"
    )


def test_the_check_sees_a_spelled_key(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text('SELECTOR = {"cloud.google.com/gke-spot": "true"}\nDOC = "gke-gpu"\n')
    assert _key_literals(module) == ["cloud.google.com/gke-spot"]


def test_every_key_has_one_name() -> None:
    keys = {
        name: value
        for name, value in vars(labels).items()
        if name.isupper() and isinstance(value, str) and name != "PART_OF"
    }
    by_value: dict[str, list[str]] = {}
    for name, value in keys.items():
        by_value.setdefault(value, []).append(name)
    assert {v: n for v, n in by_value.items() if len(n) > 1} == {}, "one key, one name"


def test_the_config_layer_keeps_users_off_the_placement_labels() -> None:
    missing = set(PLACEMENT_LABELS) - set(PROGRAM_SELECTORS)
    assert not missing, (
        f"{sorted(missing)}: a workload's nodeSelector could override the capacity the program "
        "chose; components/config/rules/workloads.py PROGRAM_SELECTORS must list it"
    )


# --- names the config layer reserves -------------------------------------------------------------


@pytest.mark.parametrize(
    "stack",
    [
        "dev",
        "prod",
        "examples/operator",
        "examples/internal-vpc",
        "examples/fast-start",
        "examples/multihost",
    ],
)
def test_every_object_in_the_workload_namespace_is_one_the_config_layer_knows(stack: str) -> None:
    """components/config/rules/names.py refuses a workload whose objects would share a name with
    another's or the namespace's own: it must know every name the components register."""
    folder, _, name = stack.rpartition("/")
    path = ROOT / folder / f"Pulumi.{name}.yaml"
    plan = render(name, path)
    config = plan.config
    assert config is not None
    known = set(names.NAMESPACE_OBJECTS)
    for w in config.workloads:
        known.update(
            names.workload_objects(
                w.spec.name,
                slices.kind_of(w).spec,
                w.expose is not None,
                w.routing == "cache-aware",
            )
        )
    registered = {
        (r.type.rsplit(":", 1)[-1], r.inputs["metadata"]["name"])
        for r in plan.recording.kubernetes_objects()
        if (r.inputs.get("metadata") or {}).get("namespace") == config.namespace
    }
    assert registered, "the stack registers objects in its namespace"
    assert registered <= known, (
        f"{stack}: objects the config layer does not reserve, so a workload could be named into "
        f"a collision with them: {sorted(registered - known)}"
    )
