"""The product does not depend on the development tools: nothing that `pulumi up`, the policy pack
or the offline plan runs (components/, tools/, policy/, __main__.py) imports dev/ (the fuzzer and
the benchmark), so dev/ can change, or be left out, without changing what is deployed."""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

PRODUCT = ("components", "tools", "policy", "__main__.py")
DEV = "dev"


def _product_files() -> list[Path]:
    files: list[Path] = []
    for name in PRODUCT:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def _module(path: Path) -> str:
    """The dotted name a file imports as (`tools/render.py` -> `tools.render`)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(source: str, module: str = "", is_package: bool = False) -> Iterator[str]:
    """Every module name `source` imports, anywhere in it (inside functions and `if
    TYPE_CHECKING:` too), relative imports resolved against `module`, and the literal names given
    to importlib.import_module or __import__."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                prefix = ".".join(base)
                name = f"{prefix}.{node.module}" if node.module else prefix
            else:
                name = node.module or ""
            yield name
            yield from (f"{name}.{alias.name}" if name else alias.name for alias in node.names)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if called in ("import_module", "__import__") and isinstance(first, ast.Constant):
                yield str(first.value)


def _is_dev(name: str) -> bool:
    return name == DEV or name.startswith(DEV + ".")


def test_no_product_module_imports_dev() -> None:
    files = _product_files()
    assert ROOT / "__main__.py" in files and len(files) > 20, (
        f"found only {len(files)} product files: the check would pass without looking"
    )
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in imported(path.read_text(), _module(path), path.name == "__init__.py")
        if _is_dev(name)
    ]
    assert offenders == [], (
        f"{offenders}: the program, the policy pack and the offline plan must not depend on the "
        "development tools (dev/ may import them, never the reverse)"
    )


def test_the_check_sees_every_way_of_importing_dev() -> None:
    sources = [
        "import dev.fuzz",
        "from dev import fuzz",
        "from dev.fuzz.case import Case",
        "def f():\n    from dev import benchmark",
        "import importlib\nimportlib.import_module('dev.fuzz')",
        "__import__('dev')",
    ]
    for source in sources:
        assert any(map(_is_dev, imported(source, "tools.render"))), source
    # Relative imports are resolved: these name tools.dev and tools.sub.dev, not dev.
    assert "tools.dev" in set(imported("from .. import dev", "tools.sub.mod"))
    assert "tools.sub.dev" in set(imported("from . import dev", "tools.sub", is_package=True))
    for source in ("import tools.render", "from tools import engine", "import devtools"):
        assert not any(map(_is_dev, imported(source, "tools.render"))), source


def test_the_benchmark_floor_holds_every_sdk_class_the_shipped_stacks_register():
    """The benchmark's ratios are to the SDK classes the program needs; a type it registers that
    the floor does not import would flatter the program's own share."""
    import importlib

    from dev.benchmark import SDK_CLASSES
    from tests import golden

    registered = {
        r.type
        for name, path in golden.stacks()
        for r in golden.render(name, path).recording.resources
        if not r.type.startswith("gke-gpu:")
    }
    missing = sorted(registered - set(SDK_CLASSES))
    assert not missing, f"dev/benchmark.py SDK_CLASSES lacks {missing}: add each type's class"
    for type_, path in SDK_CLASSES.items():
        module, name = path.rsplit(".", 1)
        assert hasattr(importlib.import_module(module), name), f"{type_}: no class {path}"


def test_the_benchmarks_large_stack_is_one_the_program_accepts():
    """`python -m dev.benchmark` times the program on its large stack; one the config refuses
    times an error message (a rule added since refused its multi-GPU vLLM pods)."""
    from components.config import load
    from dev.benchmark import large_stack

    keys = large_stack()["config"]
    raw = {k.partition(":")[2]: v for k, v in keys.items() if k.startswith("gke-gpu:")}
    config = load(raw, project=keys["gcp:project"], region=keys["gcp:region"], stack="large")
    assert len(config.workloads) == 40, "the large stack's 40 workloads"


# A path in another repository's tree (named just before it) or one kept on purpose.
NOT_OURS = {
    "examples/gke-a4x-max-bm/README.md",  # cluster-toolkit's
    "examples/gcsfuse-profiles/README.md",  # gcs-fuse-csi-driver's
    "docs/gpt-oss-20b-architecture.md",  # EchoCog/gpt-oss-20b's (components/facts/models_more.py)
    "components/haproxy.py",  # the deployed haproxy.cfg header (components/service/haproxy.py)
    "tests/golden/RELEASE.json",  # the usage line's placeholder
    # The trial variants tests/test_new_variant.py writes in a scratch copy, never shipped.
    *(
        f"components/{layer}/{name}{half}.py"
        for layer, name in (("kinds", "ray_job"), ("expose", "inference_gateway"))
        for half in ("", "_spec")
    ),  # fmt: skip
    "tests/test_ray_job.py",
    "tests/test_inference_gateway.py",
    "tools/crds/ray.io_v1_RayJob.json",
}
PATH_IN_TEXT = re.compile(
    r"(?<![\w/.-])((?:components|tools|tests|policy|dev|docs|examples|\.github|\.ci)/"
    r"[\w./-]*\w\.(?:py|md|yaml|yml|json|sh))"
)


def test_every_file_a_comment_or_page_cites_exists():
    """A comment citing a file that moved sends the reader nowhere (the issue found several)."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    missing = [
        f"{name}:{number}: {path}"
        for name in tracked
        if name.endswith((".py", ".md", ".yaml", ".yml", ".toml"))
        and not name.startswith("tests/golden/")
        and (ROOT / name).exists()
        for number, line in enumerate((ROOT / name).read_text().splitlines(), 1)
        for path in PATH_IN_TEXT.findall(line)
        if path not in NOT_OURS and not (ROOT / path).exists()
    ]
    assert not missing, f"cited files that do not exist (moved or renamed?): {missing}"


# components/ in layers, lowest first: a layer may import those below it, never one above. How a
# workload runs (components/kinds/) and how it is reached (components/expose/), both listed in
# components/slices.py, sit between the platform they may ask for and the service that registers
# them; what each declares of itself (its descriptor: components/kinds/spec.py and
# `<kind>_spec.py`, the same in components/expose/) sits below the config layer that asks it.
DESCRIPTORS = "descriptors: components.kinds.*spec, components.expose.*spec"
LAYERS = (
    ("components.facts",),
    (DESCRIPTORS,),
    ("components.config",),
    ("components.platform",),
    ("components.kinds", "components.expose", "components.slices"),
    ("components.service",),
)


def _in(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def is_descriptor(module: str) -> bool:
    """A variant's descriptor module, or the descriptors' protocol (`components.kinds.job_spec`,
    `components.expose.spec`)."""
    parts = module.split(".")
    return (
        len(parts) >= 3
        and parts[:2] in (["components", "kinds"], ["components", "expose"])
        and (parts[2] == "spec" or parts[2].endswith("_spec"))
    )


def _layer(module: str) -> int | None:
    if is_descriptor(module):
        return LAYERS.index((DESCRIPTORS,))
    return next(
        (i for i, layer in enumerate(LAYERS) if any(_in(module, p) for p in layer)),
        None,
    )


def test_the_descriptors_sit_below_the_config_layer_that_asks_them():
    for module in ("components.kinds.job_spec", "components.expose.spec"):
        assert _layer(module) == 1 < (_layer("components.config.variants") or 0), module
    for module in ("components.kinds.job", "components.kinds.base", "components.expose.gateway"):
        assert _layer(module) == _layer("components.slices"), module


def test_components_import_downward_only():
    """service -> kinds, expose -> platform -> config -> facts: a reader starts at the bottom and
    never needs a layer above to understand one below (the structure docs/architecture.md draws)."""
    upward = []
    for path in sorted((ROOT / "components").rglob("*.py")):
        module = _module(path)
        own = _layer(module)
        if own is None:
            continue
        for name in imported(path.read_text(), module, path.name == "__init__.py"):
            other = _layer(name)
            if other is not None and other > own:
                upward.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not upward, f"imports up the layers {LAYERS}: {sorted(set(upward))}"


# What a kind module (components/kinds/) may import of components/: the layers below it, the one
# helper every Kubernetes object uses, the kinds' protocol and their descriptors' (spec), and its
# own descriptor (`<module>_spec`). Never another kind (each is a variant of its own: adding one
# touches no other) nor the service that registers it.
KIND_MAY_IMPORT = (
    "components.facts",
    "components.config",
    "components.platform",
    "components.manifest",
    "components.kinds.base",
    "components.kinds.spec",
)


def _slice_offences(
    source: str, module: str, may_import: tuple[str, ...], is_package: bool = False
) -> list[str]:
    """What a slice module (components/kinds/, components/expose/) imports of components/ beyond
    `may_import`: its package itself (`from components.kinds import base`) is let through, each
    module it names is judged."""
    package = module.rsplit(".", 1)[0] if not is_package else module
    own_spec = module.removesuffix("_spec") + "_spec"
    return sorted(
        {
            name
            for name in imported(source, module, is_package)
            if _in(name, "components")
            and name not in ("components", package)
            and not any(_in(name, allowed) for allowed in (*may_import, own_spec))
        }
    )


def _slice_offenders(folder: Path, may_import: tuple[str, ...]) -> dict[str, list[str]]:
    """Each module of a slice folder with what it imports beyond `may_import`."""
    return {
        str(path.relative_to(ROOT)): found
        for path in sorted(folder.glob("*.py"))
        if (
            found := _slice_offences(
                path.read_text(), _module(path), may_import, path.name == "__init__.py"
            )
        )
    }


def _kind_offences(source: str, module: str) -> list[str]:
    return _slice_offences(source, module, KIND_MAY_IMPORT)


def test_a_kind_imports_the_layers_below_and_the_protocol_only():
    kinds = sorted((ROOT / "components" / "kinds").glob("*.py"))
    assert len(kinds) >= 4, f"found only {[p.name for p in kinds]}: the check would not look"
    offenders = _slice_offenders(ROOT / "components" / "kinds", KIND_MAY_IMPORT)
    assert not offenders, (
        f"{offenders}: a kind imports only {KIND_MAY_IMPORT}; share code through "
        "components/kinds/base.py, and let components/slices.py list the kinds"
    )


def test_the_kind_check_sees_another_kind_and_the_service():
    here = "components.kinds.deployment"
    for source in (
        "from components.kinds import job",
        "from components.kinds.statefulset import data_claims",
        "from . import job",
        "from .job import Job",
        "from .job_spec import JOB",
        "from components import slices",
        "from components.service.pod import pod_template",
        "import components.service.workload",
    ):
        assert _kind_offences(source, here), source
    for source in (
        "from components.kinds.base import Kind",
        "from .base import Kind",
        "from .deployment_spec import DEPLOYMENT",
        "from .spec import KindSpec",
        "from components.config import WorkloadConfig",
        "from components.manifest import manifest",
        "from components import manifest",
        "import pulumi_kubernetes as k8s",
    ):
        assert not _kind_offences(source, here), source


def _kind_comparisons(source: str) -> list[int]:
    """Lines where `<something>.kind` is compared (==, !=, in, not in) or matched on."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Match):
            operands = [node.subject]
        else:
            continue
        if any(isinstance(o, ast.Attribute) and o.attr == "kind" for o in operands):
            lines.append(node.lineno)
    return lines


def test_above_the_kinds_code_asks_the_kind_and_never_compares_its_name():
    """service/ and tools/ read what differs by kind from the kind (components/slices.py
    kind_of(w)): a new kind then touches its own module, not every `kind == "Job"` (issue 32)."""
    files = sorted((ROOT / "components" / "service").glob("*.py")) + sorted(
        (ROOT / "tools").rglob("*.py")
    )
    assert len(files) > 20, f"found only {len(files)} files: the check would not look"
    compared = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in files
        for line in _kind_comparisons(path.read_text())
    ]
    assert not compared, (
        f"{compared} compare a kind by name: give components/kinds/base.py's Kind a property "
        "(holds_replicas, awaited, restart_policy, ...) and ask slices.kind_of(w) instead"
    )


def test_the_kind_comparison_check_sees_each_form():
    for source in (
        'w.kind == "Job"',
        'x = w.kind != "Job"',
        'w.kind in ("Job",)',
        '"Job" == w.kind',
        'match w.kind:\n    case "Job":\n        pass',
    ):
        assert _kind_comparisons(source), source
    for source in ('f"{w.kind}"', 'kind == "extra_forbidden"', "kind = slices.kind_of(w)"):
        assert not _kind_comparisons(source), source


# What an exposure module (components/expose/) may import of components/: the layers below it and
# the exposures' protocol. Never another exposure (a new type touches its own module) nor the
# service that registers it.
EXPOSURE_MAY_IMPORT = (
    "components.facts",
    "components.config",
    "components.platform",
    "components.manifest",
    "components.expose.base",
    "components.expose.spec",
)


def _exposure_offences(source: str, module: str) -> list[str]:
    return _slice_offences(source, module, EXPOSURE_MAY_IMPORT)


def test_an_exposure_imports_the_layers_below_and_the_protocol_only():
    exposures = sorted((ROOT / "components" / "expose").glob("*.py"))
    assert len(exposures) >= 6, (
        f"found only {[p.name for p in exposures]}: the check would not look"
    )
    offenders = _slice_offenders(ROOT / "components" / "expose", EXPOSURE_MAY_IMPORT)
    assert not offenders, (
        f"{offenders}: an exposure imports only {EXPOSURE_MAY_IMPORT}; share code through "
        "components/expose/base.py, and let components/slices.py list the exposures"
    )


def test_the_exposure_check_sees_another_exposure_and_the_service():
    here = "components.expose.internal"
    for source in (
        "from components.expose import load_balancer",
        "from components.expose.load_balancer import LoadBalancer",
        "from . import cluster_ip",
        "from .node_port import node_port_endpoint",
        "from components import slices",
        "from components.service.load_balancer import LoadBalancerService",
        "import components.service.gate",
        "from components.kinds.base import Kind",
    ):
        assert _exposure_offences(source, here), source
    for source in (
        "from components.expose.base import LoadBalanced",
        "from .base import Exposure",
        "from components.config import Expose",
        "from components.facts.labels import INTERNAL_LB_ANNOTATION",
        "import pulumi",
    ):
        assert not _exposure_offences(source, here), source


def _is_type(node: ast.expr) -> bool:
    """`<something>.type` (e.type, expose.type, args.type) or a `type_` parameter."""
    return (isinstance(node, ast.Attribute) and node.attr == "type") or (
        isinstance(node, ast.Name) and node.id == "type_"
    )


def _names_types(node: ast.expr) -> bool:
    """A string literal, a collection of them, or LOAD_BALANCED: what a type is compared to."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_types(e) for e in node.elts)
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name == "LOAD_BALANCED"


def _type_comparisons(source: str) -> list[int]:
    """Lines where a `.type` is compared to a string literal or LOAD_BALANCED, matched on, or used
    to index a dict written out in place (`{"LoadBalancer": ...}[e.type]`)."""
    return [node.lineno for node in ast.walk(ast.parse(source)) if _compares_type(node)]


def _compares_type(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        return any(map(_is_type, operands)) and any(map(_names_types, operands))
    if isinstance(node, ast.Match):
        return _is_type(node.subject)
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Dict)
        and _is_type(node.slice)
    )


def test_above_the_exposures_code_asks_the_exposure_and_never_compares_its_type():
    """components/service/, components/outputs.py and tools/ read what differs by expose type
    from the exposure (components/slices.py exposure_named): a new type (a Gateway) then touches
    its own module, not every `e.type == "ClusterIP"` (issue 32). The config layer, below the
    slices, is not held to it."""
    files = [
        *sorted((ROOT / "components" / "service").glob("*.py")),
        ROOT / "components" / "outputs.py",
        *sorted((ROOT / "tools").rglob("*.py")),
    ]
    assert len(files) > 20, f"found only {len(files)} files: the check would not look"
    compared = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in files
        for line in _type_comparisons(path.read_text())
    ]
    assert not compared, (
        f"{compared} compare an expose type by name: give components/expose/base.py's Exposure a "
        "property (load_balanced, public, annotations, where_words, ...) and ask "
        "slices.exposure_named(e.type, ...) instead"
    )


def test_the_type_comparison_check_sees_each_form():
    for source in (
        'e.type == "ClusterIP"',
        'x = expose.type != "Internal"',
        "e.type in LOAD_BALANCED",
        "args.type not in rules.LOAD_BALANCED",
        'e.type in ("LoadBalancer", "Internal")',
        '"NodePort" == w.expose.type',
        'type_ == "Internal"',
        'match e.type:\n    case "NodePort":\n        pass',
        'where = {"LoadBalancer": "public", "NodePort": "nodes"}[e.type]',
    ):
        assert _type_comparisons(source), source
    for source in (
        "r.type == CLUSTER",
        "args.type is None",
        'spec.get("type") == "LoadBalancer"',
        "exposure = slices.exposure_named(e.type, w.name)",
        'f"{e.type}"',
    ):
        assert not _type_comparisons(source), source


# Whether a workload sleeps when idle (autoscale.minReplicas 0, KEDA's HTTP add-on) is decided in
# one place and read everywhere (issue 32): the gate, the kinds, the platform, the cost, the rules
# and the plan each once wrote it out themselves.
SLEEP_HOME = ROOT / "components" / "config" / "sleep.py"


def _sleep_derivations(source: str) -> list[int]:
    """Lines that decide "sleeps" themselves: `min_replicas` compared with 0, or `.to_zero`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "to_zero":
            found.append(node.lineno)
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            names_min = any(
                (isinstance(s, ast.Attribute) and s.attr == "min_replicas")
                or (isinstance(s, ast.Name) and s.id == "min_replicas")
                for s in sides
            )
            zero = any(isinstance(s, ast.Constant) and s.value == 0 for s in sides)
            if names_min and zero:
                found.append(node.lineno)
    return found


def test_whether_a_workload_sleeps_is_decided_once_and_read_everywhere():
    """components/config/sleep.py's sleeps() and scales_on_metric() are the one decision: a
    layer that re-derives it from minReplicas can drift from the others (the gate routing through
    KEDA's interceptor while the plan says the model never sleeps, or KEDA not installed)."""
    files = [
        *sorted((ROOT / "components").rglob("*.py")),
        *sorted((ROOT / "tools").rglob("*.py")),
        *sorted((ROOT / "policy").rglob("*.py")),
    ]
    assert SLEEP_HOME in files and len(files) > 50, "the check would not look where it should"
    assert _sleep_derivations(SLEEP_HOME.read_text()), "the check does not see the home's decision"
    derived = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in files
        if path != SLEEP_HOME
        for line in _sleep_derivations(path.read_text())
    ]
    assert not derived, (
        f"{derived} decide whether a workload sleeps from minReplicas themselves: call "
        "components.config.sleep.sleeps(w) (or scales_on_metric(w)) instead"
    )


def test_the_sleep_check_sees_each_form():
    for source in (
        "w.autoscale.min_replicas == 0",
        "x = scale.min_replicas != 0",
        "if 0 == w.autoscale.min_replicas: pass",
        "scale.min_replicas > 0",
        "min_replicas == 0",
        "w.autoscale and w.autoscale.to_zero",
        "not scale.to_zero",
    ):
        assert _sleep_derivations(source), source
    for source in (
        "sleeps(w)",
        "replicas = scale.min_replicas if scale else w.replicas",
        "scale.min_replicas > scale.max_replicas",
        "w.replicas == 0",
        '{"minReplicas": scale.min_replicas}',
    ):
        assert not _sleep_derivations(source), source


# Issue 32 item 4: modules one can hold in one's head. A generated module (its first line says
# GENERATED, with the command that writes it and a test that it is current) is read by the
# analyzer and the reference, not by a person, and is not held to it.
MODULE_LINES = 400
FUNCTION_LINES = 60


def _product_modules() -> list[Path]:
    found = [p for d in ("components", "tools", "policy") for p in (ROOT / d).rglob("*.py")]
    return [p for p in found if not p.read_text().lstrip('"').startswith("GENERATED")]


def _long_functions(path: Path, root: Path = ROOT) -> list[str]:
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > FUNCTION_LINES
    ]


def test_every_product_module_and_function_can_be_held_in_ones_head() -> None:
    modules = _product_modules()
    assert len(modules) > 100, f"found only {len(modules)} modules: the check would pass unseen"
    long_modules = [
        f"{p.relative_to(ROOT)} ({n})"
        for p in modules
        if (n := len(p.read_text().splitlines())) > MODULE_LINES
    ]
    assert not long_modules, f"{long_modules}: split each module to {MODULE_LINES} lines or fewer"
    long_functions = [f for p in modules for f in _long_functions(p)]
    assert not long_functions, (
        f"{long_functions}: split each function to {FUNCTION_LINES} lines or fewer"
    )


def test_the_size_check_sees_a_long_function_and_skips_only_generated_modules(
    tmp_path: Path,
) -> None:
    long = tmp_path / "long.py"
    long.write_text("def f():\n" + "    x = 1\n" * FUNCTION_LINES)
    assert _long_functions(long, tmp_path) == [f"long.py:1 f ({FUNCTION_LINES + 1})"], (
        "a function one line over the limit must be named with its length"
    )
    long.write_text("def f():\n" + "    x = 1\n" * (FUNCTION_LINES - 1))
    assert _long_functions(long, tmp_path) == [], "a function at the limit is fine"
    skipped = {p.name for p in ROOT.glob("components/**/*.py")} - {
        p.name for p in _product_modules()
    }
    assert skipped == {"workload_args.py"}, (
        f"only the generated module may be skipped, not {sorted(skipped)}"
    )


def test_every_unit_the_scheduler_hands_out_first_is_a_test_file_of_this_suite() -> None:
    from tests.conftest import LONGEST_FIRST, REAL_PROXY_UNIT

    stale = [u for u in LONGEST_FIRST if u != REAL_PROXY_UNIT and not (ROOT / u).is_file()]
    assert not stale, (
        f"{stale}: tests/conftest.py hands these out first, but no such file exists (renamed or "
        "removed?): the longest files would again run alone at the end of the suite"
    )
