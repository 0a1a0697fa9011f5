"""Which fields of the resolved config restate a field of the schema (issue 32, item 2).

    python -m dev.restated

The rule. A resolved dataclass (components/config/model.py, platform_model.py) is built by the
loader (components/config/build.py, loader.py) from a schema model (components/config/schema/),
its counterpart: the spec passed to `from_spec(Class, spec, **decided)`, or the one whose
attributes a direct `Class(...)` call reads. A field of the resolved class RESTATES the schema
when the loader takes its value from the spec without computing anything:

- `from_spec` copies it: the spec model has a field of the same snake_case name (the schema's
  alias is its camelCase) and the call does not decide it; or
- the call passes it a plain read of the spec: an attribute chain rooted at the spec's variable
  (`gpu_count=w.gpu.count`, `system_nodes=spec.system_pool.nodes`), maybe wrapped in `tuple()`.

A field named `spec` holds the whole parsed spec (`WorkloadConfig.spec`, `Expose.spec`): the
one description of the keys, which the resolved class carries instead of copying them; it is
not counted. Anything else is DECIDED: computed from several keys, filled from the platform or
context, defaulted by a rule. The platform classes are listed apart: they are also the public
components' Args (the package's contract, tests/test_component_args.py), so they keep their
fields whatever they restate.
"""

import ast
import dataclasses
import inspect
from pathlib import Path

from pydantic import BaseModel

from components.config import model, platform_model, schema
from components.config.schema import batch, disks, expose, monitoring, pools, workloads

ROOT = Path(__file__).resolve().parent.parent
LOADERS = ("components/config/build.py", "components/config/loader.py")
PLATFORM = {n for n, v in vars(platform_model).items() if dataclasses.is_dataclass(v)}
SPEC_NAMES = {"w", "spec", "scale"}
"""The loader's names for a spec (build.py: `w = plan.spec`, `spec: NodePoolSpec`, ...)."""


def _root(node: ast.expr) -> tuple[str | None, int]:
    """The name an attribute chain starts from, and its depth (`w.gpu.count`: w, 2)."""
    depth = 0
    while isinstance(node, ast.Attribute):
        node, depth = node.value, depth + 1
    return (node.id if isinstance(node, ast.Name) else None), depth


def _plain_read(node: ast.expr, spec_root: str | None) -> bool:
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "tuple" and len(node.args) == 1:
        node = node.args[0]
    name, depth = _root(node)
    return depth >= 1 and name is not None and name in {spec_root, *SPEC_NAMES}


def _spec_model(cls: type) -> type[BaseModel] | None:
    """The schema model a resolved class is built from (by the loader's calls)."""
    return COUNTERPART.get(cls.__name__)


COUNTERPART: dict[str, type[BaseModel]] = {
    "WorkloadConfig": schema.WorkloadSpec,
    "Expose": expose.ExposeSpec,
    "Autoscale": workloads.AutoscaleSpec,
    "Storage": disks.StorageSpec,
    "Cache": disks.CacheSpec,
    "ModelCache": disks.ModelCacheSpec,
    "Queue": batch.QueueSpec,
    "Output": batch.OutputSpec,
    "Egress": workloads.EgressSpec,
    "Probe": workloads.ProbeSpec,
    "MonitoringConfig": monitoring.MonitoringSpec,
    "NodePoolConfig": schema.NodePoolSpec,
    "Sharing": pools.SharingSpec,
    "ClusterSettings": schema.ClusterSpec,
    "ExistingClusterConfig": schema.ClusterSpec,
}
"""Each resolved class and the schema model the loader builds it from."""


def _calls() -> list[tuple[str, ast.Call, str | None, bool]]:
    """Every construction of a resolved class in the loader: (class, call, spec root, via
    from_spec)."""
    found = []
    for path in LOADERS:
        for node in ast.walk(ast.parse((ROOT / path).read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = ast.unparse(node.func).rsplit(".", 1)[-1]
            if func == "from_spec" and len(node.args) >= 2:
                cls = ast.unparse(node.args[0])
                found.append((cls, node, _root(node.args[1])[0], True))
            elif func in COUNTERPART:
                found.append((func, node, None, False))
    return found


def _resolved(name: str) -> type | None:
    """The resolved class of that name; None once it is gone (its readers read the spec)."""
    found = getattr(model, name, None) or getattr(platform_model, name, None)
    return found if isinstance(found, type) else None


def restated() -> dict[str, set[str]]:
    """Per resolved class, the fields the rule calls restated."""
    out: dict[str, set[str]] = {name: set() for name in COUNTERPART if _resolved(name)}
    for cls_name, call, spec_root, via_from_spec in _calls():
        cls = _resolved(cls_name)
        spec = _spec_model(cls) if cls else None
        if cls is None or spec is None:
            continue
        names = [f.name for f in dataclasses.fields(cls)]
        decided = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        if via_from_spec:
            out[cls_name] |= {n for n in names if n in spec.model_fields and n not in decided}
        else:
            decided |= dict(zip(names, call.args, strict=False))
        out[cls_name] |= {
            n for n, v in decided.items() if n != "spec" and _plain_read(v, spec_root)
        }
    return out


def main() -> None:
    found = restated()
    gone = sorted(set(COUNTERPART) - found.keys())
    total = fields = 0
    for group, title in ((False, "workload model (model.py)"), (True, "platform (Args)")):
        print(f"# {title}")
        for name, restates in found.items():
            if (name in PLATFORM) != group:
                continue
            cls = _resolved(name)
            assert cls is not None
            count = len(dataclasses.fields(cls))
            total, fields = total + len(restates), fields + count
            where = Path(inspect.getfile(cls)).name
            print(f"{name} ({where}): {len(restates)} of {count}: {', '.join(sorted(restates))}")
    print(f"gone (their readers read the spec): {', '.join(gone) or 'none'}")
    print(f"total: {total} of {fields} fields restate a schema field")


if __name__ == "__main__":
    main()
