"""cluster.maintenance: GKE's maintenance window and exclusions, checked as GKE checks them.

Sources (GKE, "Configure maintenance windows and exclusions",
https://cloud.google.com/kubernetes-engine/docs/how-to/maintenance-window, checked 2026-11-26):
"You must allow at least 48 hours of maintenance availability in a 32-day rolling window. Only
contiguous availability windows of at least four hours are considered." The Google provider
(hashicorp/terraform-provider-google@e03b7622 google/services/container/
resource_container_cluster.go, `maintenance_policy`): at most 20 `maintenance_exclusion`s; one of
`daily_maintenance_window`, `recurring_window` and `recurring_maintenance_window` exactly
(ExactlyOneOf), so exclusions without a window are refused by the provider; scopes NO_UPGRADES,
NO_MINOR_UPGRADES, NO_MINOR_OR_NODE_UPGRADES. NO_UPGRADES lasting at most 30 days is GKE's rule as
its "Maintenance windows and exclusions" page states it (cloud.google.com/kubernetes-engine/docs/
concepts/maintenance-windows-and-exclusions); NOT confirmed from the page's text here (the stored
copy did not include the scope table), nor the limit of the other two scopes (the minor version's
end of support), which depends on the cluster's version and is not checked. A third-party article
of 2026-06-15 (dev-ex.com, "GKE per-node-pool maintenance exclusions, 90-day no-upgrade window")
reports that GKE now takes NO_UPGRADES exclusions of up to 90 days; if Google's page confirms
it, raise NO_UPGRADES_MAX (one constant; the message and the docs follow it).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from .. import defaults
from ..choices import UpgradeScope
from ..context import Context
from ..platform_model import Maintenance, MaintenanceExclusion, MaintenanceWindow
from ..problems import Problem
from ..schema import ClusterSpec, MaintenanceWindowSpec

MIN_AVAILABLE = timedelta(hours=48)
ROLLING_DAYS = 32
MIN_STRETCH = timedelta(hours=4)
NO_UPGRADES_MAX = timedelta(days=30)
DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
PATH = "cluster.maintenance"


def parse_time(text: str) -> datetime:
    """A UTC time as the schema admits it (`2026-01-03T01:00:00Z`)."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def window(spec: ClusterSpec) -> MaintenanceWindowSpec | None:
    """The window the stack gets: its own, else production's default, else none."""
    if spec.maintenance is not None and spec.maintenance.window is not None:
        return spec.maintenance.window
    if spec.production:
        return MaintenanceWindowSpec.model_validate(defaults.PRODUCTION_MAINTENANCE_WINDOW)
    return None


def resolve(spec: ClusterSpec) -> Maintenance | None:
    """cluster.maintenance as the cluster gets it (None: GKE may upgrade at any time)."""
    chosen = window(spec)
    exclusions = spec.maintenance.exclusions if spec.maintenance is not None else []
    if chosen is None and not exclusions:
        return None
    return Maintenance(
        window=(
            MaintenanceWindow(chosen.start, chosen.end, chosen.recurrence)
            if chosen is not None
            else None
        ),
        exclusions=tuple(
            MaintenanceExclusion(e.name, e.start, e.end, UpgradeScope(e.scope)) for e in exclusions
        ),
    )


def recurrence_problem(rule: str) -> tuple[timedelta, int] | str:
    """An RRULE's period and how many windows each period opens, or what is wrong with it."""
    parts: dict[str, str] = {}
    for part in rule.split(";"):
        key, sep, value = part.partition("=")
        if not sep or not key or key in parts:
            return f"{rule!r} is not an RRULE (KEY=VALUE parts separated by ';', each key once)"
        parts[key] = value
    unknown = sorted(set(parts) - {"FREQ", "INTERVAL", "BYDAY"})
    if unknown:
        return (
            f"{rule!r} uses {', '.join(unknown)}; only FREQ, INTERVAL and BYDAY are accepted, so "
            "that GKE's 48 hours in any 32 days can be checked before `pulumi up`"
        )
    freq = parts.get("FREQ")
    if freq not in ("DAILY", "WEEKLY"):
        return f"{rule!r} needs FREQ=DAILY or FREQ=WEEKLY"
    interval_text = parts.get("INTERVAL", "1")
    if not interval_text.isdigit() or int(interval_text) < 1:
        return f"{rule!r}: INTERVAL must be a whole number of at least 1"
    interval = int(interval_text)
    days = parts["BYDAY"].split(",") if "BYDAY" in parts else []
    if days and freq != "WEEKLY":
        return f"{rule!r}: BYDAY goes with FREQ=WEEKLY"
    bad = [d for d in days if d not in DAYS]
    if bad or len(set(days)) != len(days):
        return f"{rule!r}: BYDAY lists days once each, from {','.join(DAYS)}"
    if freq == "DAILY":
        return timedelta(days=interval), 1
    return timedelta(days=7 * interval), max(1, len(days))


def available(length: timedelta, period: timedelta, per_period: int) -> timedelta:
    """The fewest hours of windows any 32 days hold (stretches under 4 hours count for nothing;
    windows that overlap or touch are counted as one stretch only when they fill the period)."""
    if length >= period:
        return timedelta(days=ROLLING_DAYS)
    if length < MIN_STRETCH:
        return timedelta(0)
    whole = math.floor(timedelta(days=ROLLING_DAYS) / period)
    return min(whole * per_period * length, timedelta(days=ROLLING_DAYS))


def window_problems(spec: MaintenanceWindowSpec, path: str) -> Iterator[Problem]:
    start, end = parse_time(spec.start), parse_time(spec.end)
    if end <= start:
        yield Problem(
            f"{path}.end",
            f"{spec.end} is not after start {spec.start}; end - start is the window's length. "
            "Set end later the same day, e.g. 12 hours after start.",
        )
        return
    recurrence = recurrence_problem(spec.recurrence)
    if isinstance(recurrence, str):
        yield Problem(
            f"{path}.recurrence",
            f"{recurrence}. Use e.g. 'FREQ=WEEKLY;BYDAY=SA,SU' (weekends) or 'FREQ=DAILY'.",
        )
        return
    period, per_period = recurrence
    hours = available(end - start, period, per_period)
    if hours < MIN_AVAILABLE:
        yield Problem(
            path,
            f"windows of {_hours(end - start)} recurring {spec.recurrence!r} give GKE "
            f"{_hours(hours)} in some 32 days; GKE refuses a policy with less than 48 hours in "
            "any 32 days, counting only stretches of 4 hours or more. Lengthen the window or "
            "let it recur more often (e.g. 12 hours on FREQ=WEEKLY;BYDAY=SA,SU).",
        )


def exclusion_problems(spec: ClusterSpec) -> Iterator[Problem]:
    if spec.maintenance is None:
        return
    seen: set[str] = set()
    for i, e in enumerate(spec.maintenance.exclusions):
        path = f"{PATH}.exclusions[{i}]"
        if e.name in seen:
            yield Problem(f"{path}.name", f"{e.name!r} is used twice. Give each exclusion a name.")
        seen.add(e.name)
        start, end = parse_time(e.start), parse_time(e.end)
        if end <= start:
            yield Problem(
                f"{path}.end",
                f"{e.end} is not after start {e.start}. Set the time the exclusion ends.",
            )
        elif e.scope == "NO_UPGRADES" and end - start > NO_UPGRADES_MAX:
            yield Problem(
                f"{path}.end",
                f"a NO_UPGRADES exclusion lasts at most {NO_UPGRADES_MAX.days} days, and this one "
                f"lasts {_hours(end - start)}; GKE refuses it. End it by "
                f"{(start + NO_UPGRADES_MAX).strftime('%Y-%m-%dT%H:%M:%SZ')}, or use scope "
                "NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES (no node is recreated), which "
                "may last until the minor version's end of support.",
            )


def problems(spec: ClusterSpec, ctx: Context) -> Iterator[Problem]:
    """cluster.maintenance on a GKE cluster (mode existing refuses the key, rules/cluster.py)."""
    del ctx  # the same rules for Standard and Autopilot
    own = spec.maintenance.window if spec.maintenance is not None else None
    if own is not None:
        yield from window_problems(own, f"{PATH}.window")
    if spec.maintenance is not None and spec.maintenance.exclusions and window(spec) is None:
        yield Problem(
            f"{PATH}.window",
            "exclusions need a window: GKE's maintenance policy has exactly one, and the Google "
            "provider refuses exclusions alone. Add a window, e.g. {start: "
            "2026-01-03T01:00:00Z, end: 2026-01-03T13:00:00Z, recurrence: "
            "'FREQ=WEEKLY;BYDAY=SA,SU'}.",
        )
    yield from exclusion_problems(spec)


def _hours(span: timedelta) -> str:
    hours = span / timedelta(hours=1)
    return f"{hours:g} hours" if hours < 72 else f"{hours / 24:g} days"
