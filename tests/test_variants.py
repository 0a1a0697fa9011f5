"""Capabilities, not names (issue 42): each variant, how a workload runs (components/kinds/) or how
it is reached (components/expose/), declares what it is in a descriptor beside its module
(`<variant>_spec.py`), and everything outside the variants asks that, never the variant's name;
a descriptor that forgets a capability fails where it is written, not in a user's stack."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from components import slices
from components.config import variants
from components.config.schema import ExposeType, Kind
from components.expose.spec import ExposureSpec
from components.facts.controllers import Controller
from components.kinds.spec import KindSpec
from tests.conftest import CLUSTER, ROOT, STANDARD, Run

# The variants' names, as a comparison would spell them: the registered kinds and exposures (a
# Gateway included) and the stack file's `kind` values they serve.
NAMES = frozenset(
    {
        *variants.KIND_SPECS,
        *(k.stack_kind for k in variants.KIND_SPECS.values()),
        *variants.EXPOSURE_SPECS,
        variants.GATEWAY.name,
    }
)
VARIANTS = (ROOT / "components" / "kinds", ROOT / "components" / "expose")


def _names(node: ast.expr, constants: frozenset[str]) -> bool:
    """A variant's name written out (a string, or a collection holding one), or a constant that
    holds them (`LOAD_BALANCED`)."""
    if isinstance(node, ast.Constant):
        return node.value in NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names(e, constants) for e in node.elts)
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return name in constants


def _lists_names(value: ast.expr | None) -> bool:
    """A collection written out whose strings are all variants' names (`("LoadBalancer",
    "Internal")`): a list of variants kept by hand."""
    if not isinstance(value, (ast.Tuple, ast.List, ast.Set)) or not value.elts:
        return False
    return all(isinstance(e, ast.Constant) and e.value in NAMES for e in value.elts)


def _manifest_reads(tree: ast.AST) -> set[str]:
    """Names bound from a read of a Kubernetes object (`kind = obj["kind"]`, `kind, name =
    obj["kind"], ...`): an object's kind, which may be a Deployment without being a variant."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = (
                zip(target.elts, node.value.elts, strict=False)
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                else [(target, node.value)]
            )
            bound |= {
                t.id
                for t, v in pairs
                if isinstance(t, ast.Name) and isinstance(v, (ast.Subscript, ast.Call))
            }
    return bound


def _held(node: ast.expr, manifest: set[str]) -> bool:
    """A value the program holds (a name or an attribute: `w.kind`, `expose.type`, `kind`), not
    one read out of a Kubernetes object (`obj["kind"]`, `spec.get("type")`)."""
    if isinstance(node, ast.Name):
        return node.id not in manifest
    return isinstance(node, ast.Attribute)


def name_comparisons(source: str, constants: frozenset[str] = frozenset()) -> list[int]:
    """Lines that decide by a variant's name: a value the program holds compared with (==, !=,
    in, not in) or matched on a variant's name, and a list of variants' names kept by hand."""
    tree = ast.parse(source)
    lines = []
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]:
        manifest = _manifest_reads(scope)
        for node in ast.walk(scope):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                if any(_names(o, constants) for o in operands) and any(
                    _held(o, manifest) and not _names(o, constants) for o in operands
                ):
                    lines.append(node.lineno)
            elif isinstance(node, ast.match_case) and _names_pattern(node.pattern):
                lines.append(node.pattern.lineno)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _lists_names(node.value):
                lines.append(node.lineno)
    return sorted(set(lines))


def _names_pattern(pattern: ast.pattern) -> bool:
    if isinstance(pattern, ast.MatchValue):
        return isinstance(pattern.value, ast.Constant) and pattern.value.value in NAMES
    if isinstance(pattern, ast.MatchOr):
        return any(map(_names_pattern, pattern.patterns))
    return False


def _outside_the_variants() -> list[Path]:
    return [
        path
        for folder in ("components", "tools", "policy")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not any(path.is_relative_to(v) for v in VARIANTS)
    ]


def _constants(files: list[Path]) -> frozenset[str]:
    """Module-level names bound to a list of variants' names, wherever they are imported."""
    found = set()
    for path in files:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and _lists_names(node.value):
                found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found |= {node.target.id} if _lists_names(node.value) else set()
    return frozenset(found)


def test_outside_the_variants_no_code_decides_by_a_variants_name() -> None:
    files = _outside_the_variants()
    assert len(files) > 100, f"found only {len(files)} files: the check would not look"
    constants = _constants(files)
    compared = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in files
        for line in name_comparisons(path.read_text(), constants)
    ]
    assert not compared, (
        f"{compared} decide by a kind's or an exposure's name: a new variant would silently take "
        "another's behaviour there. Ask its capability instead (components/config/variants.py "
        "kind_spec(w).completes, exposure_spec(e.type).load_balanced, ...), and give "
        "components/kinds/spec.py KindSpec or components/expose/spec.py ExposureSpec the "
        "capability the site needs if none says it"
    )


def test_the_name_check_sees_each_form_and_lets_kubernetes_objects_be() -> None:
    for source in (
        'w.kind == "Job"',
        'x = w.spec.kind != "Job"',
        'w.kind in ("Deployment", "StatefulSet")',
        '"NodePort" == w.expose.type',
        "e.type not in LOAD_BALANCED",
        'LOAD_BALANCED = ("LoadBalancer", "Internal")',
        'def f(kind):\n    return kind == "StatefulSet"',
        'match w.kind:\n    case "Job":\n        pass',
        'exposure.service_type == "LoadBalancer"',
    ):
        assert name_comparisons(source, frozenset({"LOAD_BALANCED"})), source
    for source in (
        'obj["kind"] == "Deployment"',
        'def f(obj):\n    kind, name = obj["kind"], obj["metadata"]["name"]\n'
        '    return kind == "Deployment"',
        'spec.get("type") == "LoadBalancer"',
        'kubernetes_kind(t) != ("apps", "Deployment")',
        'spec.type == "none"',
        'Kind = Literal["Deployment", "StatefulSet", "Job"]',
        'defaults = {"kind": "Deployment"}',
        "kind = variants.kind_spec(w)",
    ):
        assert not name_comparisons(source), source


def test_each_registrar_is_its_descriptors_and_every_descriptor_has_one() -> None:
    assert {k: v.spec for k, v in slices.KINDS.items()} == variants.KIND_SPECS, (
        "components/slices.py KINDS must register one kind per descriptor of "
        "components/config/variants.py KIND_SPECS, keyed by its name"
    )
    assert {k: v.spec for k, v in slices.EXPOSURES.items()} == variants.EXPOSURE_SPECS, (
        "components/slices.py EXPOSURES must register one exposure per descriptor of "
        "components/config/variants.py EXPOSURE_SPECS, keyed by its name"
    )


def test_the_stack_files_kinds_and_types_are_the_descriptors() -> None:
    import typing

    stack_kinds = {k.stack_kind for k in variants.KIND_SPECS.values()}
    assert stack_kinds == set(typing.get_args(Kind)), (
        "every `kind` the schema accepts must be served by a descriptor, and no descriptor may "
        "serve a `kind` the schema refuses"
    )
    assert set(variants.EXPOSURE_SPECS) == set(typing.get_args(ExposeType))


@pytest.mark.parametrize("spec", [KindSpec, ExposureSpec])
def test_a_descriptor_that_forgets_a_capability_fails_where_it_is_written(spec: type) -> None:
    fields = dataclasses.fields(spec)
    assert all(
        f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        for f in fields
    ), f"{spec.__name__}: a capability with a default is one a new variant inherits unasked"
    given = dataclasses.asdict(next(iter(_registry(spec).values())))
    for f in fields:
        partial = {k: v for k, v in given.items() if k != f.name}
        with pytest.raises(TypeError, match=f.name):
            spec(**partial)


def _registry(spec: type) -> dict[str, KindSpec] | dict[str, ExposureSpec]:
    return variants.KIND_SPECS if spec is KindSpec else variants.EXPOSURE_SPECS


def test_a_stack_kind_picks_one_descriptor_for_any_keys() -> None:
    for stack_kind in {k.stack_kind for k in variants.KIND_SPECS.values()}:
        for hosts in (1, 2):
            for schedule in (None, "0 3 * * *"):
                keys = _Keys(stack_kind, hosts, schedule)
                serving = [
                    k.name
                    for k in variants.KIND_SPECS.values()
                    if k.stack_kind == stack_kind and k.serves(keys)
                ]
                assert len(serving) == 1, (
                    f"kind {stack_kind} (hosts {hosts}, schedule {schedule}) is served by "
                    f"{serving}: exactly one descriptor must pick it"
                )


@dataclasses.dataclass(frozen=True)
class _Keys:
    kind: str
    hosts: int
    schedule: object


def test_a_kind_nothing_serves_is_refused_naming_the_kinds() -> None:
    with pytest.raises(ValueError, match="kind 'DaemonSet' is not one") as e:
        variants.kind_spec(_Keys("DaemonSet", 1, None))
    assert all(name in str(e.value) for name in variants.KIND_SPECS)


# --- the Gateway is an exposure: only the variants decide by `domain` (issue 42, step 3) --------
# A stack file picks the Gateway with expose.domain; components/config/variants.py exposure_of
# maps the keys to it, and everything else asks the descriptor (managed_certificate,
# terminates_at_edge, needs), using the domain's value only to write it (a hostname, a plan line).
DOMAIN_DECIDER = ("components/config/variants.py", "exposure_of")


_BRANCHING = frozenset({"bool", "any", "all", "filter"})


def _domain(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "domain"


def _tests_domain(node: ast.expr) -> bool:
    """`node`, used as a condition, is true or false by whether a domain is set."""
    if _domain(node):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _tests_domain(node.operand)
    if isinstance(node, ast.BoolOp):
        return any(map(_tests_domain, node.values))
    return False


def _conditions(node: ast.AST) -> list[ast.expr]:
    """What `node` branches on: an if's, a while's or a comprehension's test, or what
    bool/any/all/filter are given (a generator's element)."""
    if isinstance(node, (ast.If, ast.IfExp, ast.While)):
        return [node.test]
    if isinstance(node, ast.comprehension):
        return list(node.ifs)
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in _BRANCHING:
        return [a.elt if isinstance(a, ast.GeneratorExp) else a for a in node.args]
    return []


def _is_none_test(node: ast.Compare) -> bool:
    """`x.domain is None`, `x.domain != None`, ...: whether a domain is set."""
    operands = [node.left, *node.comparators]
    return any(map(_domain, operands)) and any(
        isinstance(o, ast.Constant) and o.value is None for o in operands
    )


def domain_decisions(source: str, allowed: str | None = None) -> list[int]:
    """Lines that decide by whether a domain is set (`x.domain is None`, `if e.domain`,
    `bool(e.domain)`, `any(w.expose.domain for ...)`), outside the function named `allowed`. A
    read of the value (`hostname=e.domain`, `e.domain == AUTO_DOMAIN`) is not one."""
    lines: set[int] = set()
    stack: list[ast.AST] = [ast.parse(source)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef) and node.name == allowed:
            continue
        stack.extend(ast.iter_child_nodes(node))
        lines |= {node.lineno} if isinstance(node, ast.Compare) and _is_none_test(node) else set()
        lines |= {c.lineno for c in _conditions(node) if _tests_domain(c)}
    return sorted(lines)


def test_outside_the_exposures_no_code_decides_by_domain() -> None:
    files = [
        path
        for folder in ("components", "tools", "policy")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not path.is_relative_to(ROOT / "components" / "expose")
    ]
    assert len(files) > 100, f"found only {len(files)} files: the check would not look"
    here, allowed = DOMAIN_DECIDER
    decided = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in files
        for line in domain_decisions(path.read_text(), allowed if path == ROOT / here else None)
    ]
    assert not decided, (
        f"{decided} decide by whether expose.domain is set: the Gateway is an exposure, picked "
        "in one place (components/config/variants.py exposure_of). Ask its descriptor "
        "(exposure_of(e).managed_certificate, .terminates_at_edge, .needs), or give "
        "components/expose/spec.py ExposureSpec the capability the site needs"
    )
    assert domain_decisions((ROOT / here).read_text()), (
        f"{here} {allowed} no longer decides by domain: drop its exemption"
    )


def test_the_domain_check_sees_each_decision_and_lets_values_be() -> None:
    for source in (
        "e.domain is None",
        "gateway = w.expose.domain is not None",
        "if e.domain:\n    pass",
        "if e is None or not e.domain:\n    pass",
        "x = site() if expose.domain else None",
        "bool(args.domain)",
        "any(w.expose and w.expose.domain for w in ws)",
        "[d for w in ws if w.expose.domain]",
        "while e.domain:\n    pass",
    ):
        assert domain_decisions(source), source
    for source in (
        "hostname = e.domain",
        "auto = w.expose.domain == AUTO_DOMAIN",
        "Gateway(domain=e.domain)",
        "name = e.domain or ''",
        "def exposure_of(e):\n    return GATEWAY if e.domain is not None else None",
        "if exposure_of(e).managed_certificate:\n    pass",
    ):
        assert not domain_decisions(source, "exposure_of"), source


def test_the_domain_picks_the_gateway_and_the_type_the_rest() -> None:
    assert variants.exposure_of(_Expose("LoadBalancer", "llm.example.com")) is variants.GATEWAY
    for type_, spec in variants.EXPOSURE_SPECS.items():
        assert variants.exposure_of(_Expose(type_, None)) is spec
    assert slices.ON_A_NAME.keys() == {variants.GATEWAY.name}, (
        "components/slices.py ON_A_NAME registers the Gateway, made on its workload's name"
    )
    gateway = slices.exposure_for(_Expose("LoadBalancer", "llm.example.com"), "llm")
    assert gateway.spec is variants.GATEWAY, "the registrar is the descriptor exposure_of picks"


@dataclasses.dataclass(frozen=True)
class _Expose:
    type: str
    domain: str | None


def test_the_platform_runs_the_controllers_the_variants_declare_they_need(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A descriptor's `needs` alone turns a controller on, without a domain or `hosts`."""
    without = run(STANDARD)
    assert "gatewayApiConfig" not in without.one(CLUSTER).inputs
    assert not without.of_type("gke-gpu:index:Lws")
    lb, deployment = variants.EXPOSURE_SPECS["LoadBalancer"], variants.KIND_SPECS["Deployment"]
    monkeypatch.setitem(
        variants.EXPOSURE_SPECS,
        lb.name,
        dataclasses.replace(lb, needs=frozenset({Controller.GATEWAY_API})),
    )
    monkeypatch.setitem(
        variants.KIND_SPECS,
        deployment.name,
        dataclasses.replace(deployment, needs=frozenset({Controller.LWS})),
    )
    needing = run(STANDARD)
    assert needing.one(CLUSTER).inputs.get("gatewayApiConfig") == {"channel": "CHANNEL_STANDARD"}, (
        "the platform turns on GKE's Gateway API when a variant in the stack needs it"
    )
    assert needing.of_type("gke-gpu:index:Lws"), (
        "the platform installs the LWS controller when a variant in the stack needs it"
    )


def test_a_kind_that_declares_batch_keys_must_build_them_and_one_that_completes_never_restarts():
    """A registrar whose object lacks the batch keys its descriptor takes would have the plan
    describe a queue or a time cap the object does not carry (a review found it); a kind that
    completes gets restartPolicy Never, which a Job's pods require, without saying so."""
    from components.kinds.base import Kind

    taking = dataclasses.replace(variants.KIND_SPECS["Deployment"], takes=frozenset({"queue"}))
    with pytest.raises(TypeError, match=r"declares takes=\['queue'\], and its registrar"):
        type("Queued", (Kind,), {"spec": taking, "pod_spec_path": ("spec",)})
    completing = dataclasses.replace(variants.KIND_SPECS["Job"], takes=frozenset())
    kind = type("Completes", (Kind,), {"spec": completing, "pod_spec_path": ("spec",)})
    assert kind.restart_policy == "Never", "Kubernetes refuses Always for a Job's pods"
