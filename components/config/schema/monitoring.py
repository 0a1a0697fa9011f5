"""`gke-gpu:monitoring`: the stack's dashboard, its alerts, and who the alerts notify."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from .base import Model

Reference = Annotated[str, StringConstraints(min_length=1, max_length=256)]


class MonitoringSpec(Model):
    """A Cloud Monitoring dashboard and alert policies for the stack (GKE), or the same alerts as
    a Prometheus rules file (existing clusters). See [Monitoring](monitoring.md)."""

    dashboard: bool = True
    """GKE: a Cloud Monitoring dashboard of the stack's GPUs, replicas, queue, time to first
    token, errors and estimated hourly cost."""
    alerts: bool = True
    """Alert policies (GKE), or a ConfigMap holding the same alerts as Prometheus rules (existing
    clusters): a GPU idle at full price, the error rate, pods waiting for GPU capacity."""
    gpu_idle_seconds: Annotated[int, Field(ge=300, le=86_400)] = 3600
    """How long a GPU may stay unused (utilisation under 1%) while its node runs before the idle
    alert fires."""
    error_rate_percent: Annotated[int, Field(ge=1, le=100)] = 5
    """The share of the model servers' requests that end aborted or in error, over 5 minutes,
    above which the error alert fires."""
    pending_seconds: Annotated[int, Field(ge=60, le=86_400)] = 900
    """How long a pod of the stack's namespace may stay unschedulable (waiting for GPU capacity)
    before the pending alert fires.

    A GPU node takes minutes to create, so a pod that waits for one is Pending for a while on
    every scale-up and every wake from zero.
    """
    notification_channels: Annotated[list[Reference], Field(max_length=16)] = []
    """Existing Cloud Monitoring notification channels the alerts notify, by resource name:
    `projects/PROJECT/notificationChannels/ID` (`gcloud beta monitoring channels list`)."""
    emails: Annotated[list[Reference], Field(max_length=16)] = []
    """Addresses the alerts email: the stack creates an email notification channel for each.

    Stored in the stack file and the state in plain text (personal data, not a secret).
    """
