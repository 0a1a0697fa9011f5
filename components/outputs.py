"""The stack outputs: where the service answers, how to trust it, and the key it requires."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from . import slices
from .expose.base import Exposure
from .platform import Platform
from .service.gpu_service import GpuService


def stack_outputs(platform: Platform, services: Sequence[GpuService]) -> dict[str, Any]:
    """`url` (and `externalIp` for a public one) is the first load-balanced workload's address;
    `apiKey` that workload's key, else the first key; `endpoints` and `apiKeys` every one;
    `models` the names each model server answers to (what a client puts in "model")."""
    config = platform.config
    by_name = {s.workload.spec.name: s for s in services}
    exposed = [s for s in services if s.service is not None and s.workload.expose is not None]
    balanced = [s for s in exposed if _exposure(s).load_balanced]
    outputs: dict[str, Any] = {}
    if balanced:
        first = balanced[0]
        assert first.service is not None
        if _exposure(first).public:
            outputs["externalIp"] = first.service.external_ip
        outputs["url"] = first.service.url
    outputs["clusterName"] = platform.cluster.name
    outputs["clusterMode"] = config.cluster.mode
    if platform.cluster.kubeconfig is not None:
        # A context of the ambient kubeconfig exports no credentials.
        outputs["kubeconfig"] = platform.cluster.kubeconfig
    outputs["endpoints"] = {s.workload.spec.name: s.url for s in exposed}
    # `python -m tools.smoke` expects these in /v1/models: the model, then its LoRA adapters.
    outputs["models"] = {
        s.workload.spec.name: [s.workload.model, *(name for name, _ in s.workload.adapters)]
        for s in services
        if s.workload.model is not None
    }
    if platform.ca is not None:
        # `curl --cacert <(pulumi stack output caCertificate) $URL/v1/models ...`: public.
        outputs["caCertificate"] = platform.ca.cert_pem
    # A workload with expose.keys is called with its consumers' keys only (the gate refuses its
    # own): apiKeys.<workload>.<consumer>, and no apiKey.
    keys = {
        name: s.api_key
        for name, s in by_name.items()
        if s.api_key is not None and not s.consumer_keys
    }
    records = {
        s.workload.spec.name: s.service.exposure.dns_records
        for s in exposed
        if s.service is not None and s.service.exposure.dns_records is not None
    }
    if records:
        # expose.domain: the records to create at your DNS provider (the plan says when).
        outputs["dnsRecords"] = records
    if keys:
        # `curl -H "Authorization: Bearer $(pulumi stack output apiKey --show-secrets)" ...`
        url_workload = balanced[0].workload.spec.name if balanced else None
        outputs["apiKey"] = keys[url_workload if url_workload in keys else next(iter(keys))]
    every: dict[str, Any] = {
        name: s.consumer_keys or keys[name]
        for name, s in by_name.items()
        if s.consumer_keys or name in keys
    }
    if every:
        outputs["apiKeys"] = pulumi.Output.secret(every)
    return outputs


def _exposure(service: GpuService) -> Exposure:
    """How an exposed workload is reached (components/slices.py EXPOSURES)."""
    expose = service.workload.expose
    assert expose is not None
    return slices.exposure_of(expose, service.workload.spec.name)
