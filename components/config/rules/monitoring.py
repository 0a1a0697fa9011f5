"""`monitoring`: notification channels by resource name, email addresses, and what an existing
cluster (no Cloud Monitoring of this stack) can have."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .. import formats
from ..context import Context
from ..problems import Problem
from ..schema.monitoring import MonitoringSpec

# A notification channel's resource name (Cloud Monitoring API v3,
# projects.notificationChannels: "projects/[PROJECT_ID_OR_NUMBER]/notificationChannels/
# [CHANNEL_ID]"); a project number is all digits, a channel id is digits.
CHANNEL = rf"projects/(?:{formats.PROJECT_ID}|[0-9]{{6,20}})/notificationChannels/[0-9]{{1,30}}"
# Deliberately loose: one `@`, a dotted domain, no spaces. Cloud Monitoring verifies nothing at
# creation; a typo is found when the first alert goes nowhere, so the obvious ones are refused.
EMAIL = r"[^@\s,;]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"


def problems(spec: MonitoringSpec, ctx: Context) -> Iterator[Problem]:
    """Every malformed channel and address, each by its index; then what an existing cluster
    cannot have."""
    for i, channel in enumerate(spec.notification_channels):
        if not re.fullmatch(CHANNEL, channel, flags=re.ASCII):
            yield Problem(
                f"monitoring.notificationChannels[{i}]",
                f"{formats.show(channel)} is not a notification channel's resource name. Use "
                "projects/PROJECT/notificationChannels/ID, as `gcloud beta monitoring channels "
                "list --format='value(name)'` prints it (or list the address under "
                "monitoring.emails and the stack creates the channel).",
            )
    for i, address in enumerate(spec.emails):
        if not re.fullmatch(EMAIL, address, flags=re.ASCII):
            yield Problem(
                f"monitoring.emails[{i}]",
                f"{formats.show(address)} is not an email address: write one address per item, "
                "e.g. oncall@example.com.",
            )
    yield from _duplicates("monitoring.notificationChannels", spec.notification_channels, CHANNEL)
    yield from _duplicates("monitoring.emails", [a.lower() for a in spec.emails], EMAIL)
    if ctx.existing:
        yield from _existing_problems(spec)


def _duplicates(base: str, values: list[str], pattern: str) -> Iterator[Problem]:
    """A well-formed value listed again (a malformed one already has its own problem)."""
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value in seen and re.fullmatch(pattern, value, flags=re.ASCII):
            yield Problem(f"{base}[{i}]", "listed twice: remove the repeat.")
        seen.add(value)


def _existing_problems(spec: MonitoringSpec) -> Iterator[Problem]:
    """An existing cluster gets the alerts as Prometheus rules for its own Prometheus: nothing
    of this stack reaches Cloud Monitoring, so its channels and addresses would notify no one."""
    for key, given in (
        ("notificationChannels", spec.notification_channels),
        ("emails", spec.emails),
    ):
        if given:
            yield Problem(
                f"monitoring.{key}",
                "an existing cluster gets its alerts as a Prometheus rules file (a ConfigMap), "
                "which your Prometheus and Alertmanager route; this stack creates nothing in "
                f"Cloud Monitoring to notify. Remove monitoring.{key} and route the alerts in "
                "Alertmanager (docs/monitoring.md).",
            )
