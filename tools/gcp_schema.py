"""The offline plan's check of the Cloud Monitoring resources: inputs the installed pulumi-gcp
has, and a dashboard JSON the Dashboards API reads.

The Kubernetes objects are checked against their OpenAPI schema (tools/render.py); a Google Cloud
resource has none here, but its SDK's `<Type>Args` classes list every input, nested ones included
(pulumi_gcp/monitoring/alert_policy.py, _inputs.py), so an input the provider does not have is
found before `pulumi up` would refuse or drop it.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from collections.abc import Iterator
from typing import Any

from pydantic.alias_generators import to_camel

from tools.engine import Recording

CHECKED = (
    "gcp:monitoring/alertPolicy:AlertPolicy",
    "gcp:monitoring/dashboard:Dashboard",
    "gcp:monitoring/notificationChannel:NotificationChannel",
)
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
# Field names of the Dashboards API the program writes (monitoring.googleapis.com/v1
# projects.dashboards; cloud.google.com/monitoring/dashboards/api-examples shows each in use).
# Keyed by what holds them; an unknown field makes dashboards.create refuse the dashboard.
DASHBOARD_FIELDS: dict[str, frozenset[str]] = {
    "dashboard": frozenset({"displayName", "mosaicLayout"}),
    "mosaicLayout": frozenset({"columns", "tiles"}),
    "tile": frozenset({"xPos", "yPos", "width", "height", "widget"}),
    "widget": frozenset({"title", "xyChart", "text"}),
    "xyChart": frozenset({"dataSets", "yAxis"}),
    "dataSet": frozenset({"timeSeriesQuery", "plotType", "legendTemplate"}),
    "timeSeriesQuery": frozenset({"prometheusQuery", "unitOverride"}),
    "yAxis": frozenset({"label", "scale"}),
    "text": frozenset({"content", "format"}),
}
_NESTED = re.compile(r"'?(\w+Args)'?")


def args_class(type_: str) -> type:
    """`gcp:monitoring/alertPolicy:AlertPolicy` -> pulumi_gcp.monitoring.AlertPolicyArgs."""
    package, rest = type_.split(":", 1)
    module, name = rest.split("/", 1)[0], type_.rsplit(":", 1)[1]
    found: type = getattr(importlib.import_module(f"pulumi_{package}.{module}"), f"{name}Args")
    return found


def _parameters(cls: type) -> dict[str, str]:
    """camelCase input name -> its annotation as text (nested Args classes are named in it)."""
    return {
        to_camel(name): str(parameter.annotation)
        for name, parameter in inspect.signature(cls.__init__).parameters.items()  # type: ignore[misc]
        if name not in ("self", "__self__")
    }


def input_problems(value: Any, cls: type, path: str) -> Iterator[str]:
    """Every key of `value` (recursively) that `cls` and its nested Args classes do not have."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from input_problems(item, cls, f"{path}[{i}]")
        return
    if not isinstance(value, dict):
        return
    known = _parameters(cls)
    module = importlib.import_module(cls.__module__.rsplit(".", 1)[0] + "._inputs")
    for key, item in value.items():
        if key not in known:
            yield f"{path}.{key}: pulumi-gcp's {cls.__name__} has no such input"
            continue
        nested = [n for n in _NESTED.findall(known[key]) if hasattr(module, n)]
        if nested and nested[0] != cls.__name__:
            yield from input_problems(item, getattr(module, nested[0]), f"{path}.{key}")


def dashboard_problems(text: str, path: str) -> Iterator[str]:
    """The dashboard JSON parses and names only the Dashboards API's fields."""
    try:
        document = json.loads(text)
    except ValueError as error:
        yield f"{path}: dashboardJson is not JSON ({error})"
        return

    def check(kind: str, value: Any, where: str) -> Iterator[str]:
        if not isinstance(value, dict):
            yield f"{where}: expected an object"
            return
        for key in sorted(set(value) - DASHBOARD_FIELDS[kind]):
            yield f"{where}.{key}: not a field of the Dashboards API's {kind}"

    yield from check("dashboard", document, path)
    layout = document.get("mosaicLayout") or {}
    yield from check("mosaicLayout", layout, f"{path}.mosaicLayout")
    for i, tile in enumerate(layout.get("tiles") or []):
        where = f"{path}.mosaicLayout.tiles[{i}]"
        yield from check("tile", tile, where)
        widget = tile.get("widget") or {}
        yield from check("widget", widget, f"{where}.widget")
        if "text" in widget:
            yield from check("text", widget["text"], f"{where}.widget.text")
        chart = widget.get("xyChart")
        if chart is None:
            continue
        yield from check("xyChart", chart, f"{where}.widget.xyChart")
        yield from check("yAxis", chart.get("yAxis") or {}, f"{where}.widget.xyChart.yAxis")
        for j, data_set in enumerate(chart.get("dataSets") or []):
            at = f"{where}.widget.xyChart.dataSets[{j}]"
            yield from check("dataSet", data_set, at)
            yield from check("timeSeriesQuery", data_set.get("timeSeriesQuery") or {}, at)


def problems(recording: Recording) -> list[str]:
    """Every Cloud Monitoring resource's inputs against pulumi-gcp, and each dashboard's JSON."""
    found: list[str] = []
    for r in recording.resources:
        if r.type not in CHECKED:
            continue
        found += input_problems(r.inputs, args_class(r.type), r.name)
        if r.type == DASHBOARD:
            found += dashboard_problems(str(r.inputs.get("dashboardJson", "")), r.name)
    return found
