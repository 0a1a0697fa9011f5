"""The offline plan's words on how a workload is reached: who may connect, the gate in front of it
(what it requires, forwards and limits, its certificate) and how requests meet replicas. Part of
the summary (tools/summary.py)."""

from __future__ import annotations

from components import slices
from components.config import ClusterConfig, Expose, StackConfig, WorkloadConfig
from components.config.formats import is_vllm_image
from components.config.sleep import sleeps
from components.platform import scraped
from components.platform.certificate import split_hosts
from components.service import gate, gate_pod, haproxy_routing
from components.service import haproxy_limits as limits


def exposure_lines(config: StackConfig, w: WorkloadConfig) -> list[str]:
    """Who can reach the workload and how: scheme, source ranges, the gate in front of it (its
    allowed paths and key), the certificate and what reaches the model server around the gate."""
    # GKE Dataplane V2 enforces NetworkPolicy (Autopilot always; Standard unless
    # cluster.dataplaneV2 is false); an existing cluster's CNI is not known here.
    cluster = config.cluster
    enforced = (
        "enforced only if the cluster's CNI enforces NetworkPolicy"
        if not isinstance(cluster, ClusterConfig)
        else "Dataplane V2 enforces it"
        if cluster.mode == "autopilot" or cluster.dataplane_v2
        else "NOT enforced: cluster.dataplaneV2 is false"
    )
    e = w.expose
    if e is None:
        key = f"API key (stack output apiKeys.{w.spec.name}, secret)" if w.api_key else "no API key"
        return [f"            not exposed: no Service, default-deny ingress ({enforced}); {key}"]
    scheme = "HTTPS" if e.spec.tls else "plain HTTP (expose.tls: false: keys and prompts in clear)"
    where = slices.exposure_of(e, w.spec.name).where_words(e, config.namespace)
    lines = [f"            exposed: {scheme}, {where}", *_gate_lines(config, w, e)]
    front = "KEDA's interceptor (the gate forwards through it)" if sleeps(w) else "the gate"
    if w in scraped(config):
        # Not "nothing": the collector pods reach the API on the port /metrics shares.
        lines.append(
            "            reaches the model server directly: no client; NetworkPolicy admits only "
            f"{front} and Managed Prometheus' collectors (gmp-system; gke-gmp-system on "
            f"Autopilot), to port {w.spec.port}, which serves the API as well as /metrics (a "
            f"NetworkPolicy cannot filter paths); "
            f"{enforced}"
        )
        return lines
    lines.append(
        f"            reaches the model server directly: nothing (NetworkPolicy admits only "
        f"{front}; {enforced})"
    )
    return lines


def _gate_limits_line(w: WorkloadConfig, e: Expose) -> str:
    """What the gate does before any key is checked (components/service/haproxy_limits.py)."""
    tls = "TLS 1.2 (ECDHE with AES-GCM or ChaCha20) or 1.3; " if e.spec.tls else ""
    failures = (
        f"{limits.FAILED_KEYS} wrong keys from one address in {limits.FAILED_KEY_SECONDS} s: "
        f"429 for up to {limits.FAILED_KEY_SECONDS} s; "
        if gate.gate_requires_key(w)
        else ""
    )
    exposure = slices.exposure_of(e, w.spec.name)
    idle = (
        f", an idle one or one still in its TLS handshake kept "
        f"{limits.FRONT_END_KEEPALIVE_SECONDS} s (only Google's front end connects there, and it "
        f"reuses a connection for up to {limits.FRONT_END_REUSE_SECONDS} s: a gate that closed it "
        "sooner would cost a client a 502)"
        if exposure.proxy_ranges
        else ""
    )
    body = (
        f" ({haproxy_routing.BODY_WAIT_SECONDS} s before its TLS handshake ends, and "
        f"{haproxy_routing.BODY_WAIT_SECONDS} s for a body's first "
        f"{haproxy_routing.ROUTE_PREFIX_BYTES} bytes, which routing reads)"
        if w.routing == "cache-aware"
        else ""
    )
    share = (
        ""
        if exposure.proxy_ranges
        else f", at most {limits.PER_SOURCE_CONNECTIONS} from one address"
    )
    return (
        f"            gate limits: {tls}{limits.API_CONNECTIONS} of {limits.MAX_CONNECTIONS} "
        f"connections for the API{share} ({limits.HEALTH_CONNECTIONS} kept for kubelet's "
        "probes), one "
        f"without a complete request closed after {limits.REQUEST_SECONDS} s{body}{idle}; "
        f"{failures}the model sees {exposure.client_words} in X-Forwarded-For, never one a client "
        "sent"
    )


def _websockets_line(w: WorkloadConfig, e: Expose) -> str:
    """Whether an upgrade passes the gate (haproxy.py _upgrade_rules, limits.TUNNEL_SECONDS)."""
    if not e.spec.websockets:
        return (
            "            WebSockets and other upgrades: refused (400); expose.websockets: true "
            "lets WebSockets through"
        )
    key = "with the key, " if gate.gate_requires_key(w) else ""
    return (
        f"            WebSockets: let through to the allowed paths ({key}the upgrade request "
        f"checked like any other), open while either side sends within "
        f"{limits.TUNNEL_SECONDS} s; other upgrades refused (400)"
    )


def _drain_line(config: StackConfig, w: WorkloadConfig) -> str:
    """How a gate pod stops (gate_pod.py) and keeps quiet connections open (haproxy_limits.py)."""
    grace = gate_pod.termination_grace_seconds(gate.gate_settings(w, config.namespace))
    return (
        f"            gate lifecycle: TCP keepalive on client connections after "
        f"{limits.KEEPALIVE_IDLE_SECONDS} s of silence (every {limits.KEEPALIVE_INTERVAL_SECONDS} "
        f"s, so NATs keep a held request's flow); a stopping gate stops listening and finishes "
        f"what it holds for up to {grace} s ({gate_pod.STOP_SIGNAL}, the image's stop signal)"
    )


def _gate_key(w: WorkloadConfig) -> str:
    """What the gate asks of a caller, in plain words: the key, or that there is none."""
    if not gate.gate_requires_key(w):
        own = "--api-key" in " ".join((*w.spec.command, *w.args))
        return (
            "NO KEY: the server's own --api-key (args) is not checked here, so anything the "
            "server does not guard itself is open to whoever reaches the endpoint"
            if own
            else "NO KEY (apiKey: false): anyone who reaches the endpoint may call the allowed "
            "paths"
        )
    if w.expose is not None and w.expose.spec.keys:
        return (
            "a consumer's key on every request (Authorization: Bearer, constant-time), else 401: "
            + ", ".join(f"{c} (stack output apiKeys.{w.spec.name}.{c})" for c in w.expose.spec.keys)
            + "; each request's log line names its consumer, never the key; the server gets the "
            "workload's own key from the gate; removing a name revokes that key alone"
        )
    where = (
        f"stack output apiKeys.{w.spec.name}" if w.api_key else "the workload's VLLM_API_KEY secret"
    )
    server = (
        ""
        if is_vllm_image(w.spec.image)
        else "; the server also gets it as env VLLM_API_KEY, which an image other than "
        "vllm-openai may not read: the gate is what checks it"
    )
    return (
        f"the key on every request (Authorization: Bearer, constant-time; {where}), else "
        f"401{server}"
    )


def _gate_lines(config: StackConfig, w: WorkloadConfig, e: Expose) -> list[str]:
    """The gate in front of an exposed workload: what it requires and forwards, its certificate."""
    key = _gate_key(w)
    size = f"{gate_pod.REPLICAS} pods, {gate_pod.CPU} CPU / {gate_pod.MEMORY} each, on CPU nodes"
    lines = [
        f"            gate: HAProxy ({size}) terminates TLS and requires " + key
        if e.spec.tls
        else f"            gate: HAProxy ({size}) requires " + key,
        f"            allowed paths (anything else 404): {' '.join(e.paths)}",
        _websockets_line(w, e),
        _gate_limits_line(w, e),
        _drain_line(config, w),
    ]
    exposure = slices.exposure_of(e, w.spec.name)
    if e.spec.tls and exposure.own_certificate:
        lines.append(
            "            certificate (load balancer to gate only, not verified by it): issued by "
            f"the stack's CA for {w.spec.name}.{config.namespace}.svc.cluster.local"
        )
    elif e.spec.tls:
        ips, names = split_hosts(e.spec.hosts)
        address = ["the reserved address"] if e.static_ip else []
        valid_for = [*address, *ips, *names, f"{w.spec.name}.{config.namespace}.svc.cluster.local"]
        lines.append(
            "            certificate: issued by the stack's CA (stack output caCertificate) for "
            + ", ".join(valid_for)
        )
        named = exposure.named_by_cluster_dns
        if not named and not e.static_ip and not e.spec.hosts:
            lines.append(
                "            ! the certificate names no address clients use: set expose.hosts "
                "to the node or load balancer address, or clients fail to verify it"
            )
    return [*lines, *exposure.plan_lines(e)]


def routing_line(w: WorkloadConfig) -> str:
    """Which routing is in place, and why a sleeping model's is round-robin."""
    if w.routing == "cache-aware":
        return (
            f"cache-aware by the gate (same prompt prefix and model -> same replica, unless it "
            f"holds over {haproxy_routing.BALANCE_FACTOR_PERCENT}% of the average load; up to "
            f"{w.max_replicas} replicas found in DNS)"
        )
    if sleeps(w):
        return "round-robin by the Service, behind KEDA's interceptor (a sleeping model)"
    return "round-robin by the Service"
