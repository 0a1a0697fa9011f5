"""Restricted by default: every pod the program creates in the workload namespace passes Pod
Security "restricted" (the namespace enforces it), runs as a non-root user on a read-only root
filesystem, and reaches only what it needs (default-deny egress).

The controls are Kubernetes' own, field by field: "Pod Security Standards"
(kubernetes.io/docs/concepts/security/pod-security-standards), as the admission plugin checks them
(kubernetes/pod-security-admission policy/check_*.go: restrictedVolumes, allowPrivilegeEscalation,
runAsNonRoot, runAsUser, seccompProfile_restricted, capabilities_restricted, and the baseline
checks restricted includes). A pod that fails one is refused by the API server: the Deployment
exists, its ReplicaSet never makes a pod, and `pulumi up` waits 40 minutes for nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from components.config import ConfigError, load
from components.config.defaults import RUN_AS_USER
from components.config.rules.mounts import HOME_PATH
from components.facts.labels import FUSE_VOLUMES_ANNOTATION
from components.platform import egress
from components.platform.namespace import POD_SECURITY_LABELS
from tests import shared
from tests.conftest import MINIMAL, NAMESPACE, Run
from tests.test_deployable import STACK_FILES
from tools import render

POD_KINDS = {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"}
# Restricted's allowed volume sources (check_restrictedVolumes.go restrictedVolumes_1_0).
RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}
# Baseline's safe sysctls (check_sysctls.go, the newest set).
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}

# What GKE's Cloud Storage FUSE webhook injects into a pod annotated gke-gcsfuse/volumes: "true",
# as GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook/sidecar_spec.go at 01870a9d writes it
# (GetSidecarContainerSpec, GetSidecarContainerVolumeSpec; NobodyUID/NobodyGID 65534). The pod
# admitted is the mutated one, so the sidecar must pass the namespace's level too.
FUSE_SIDECAR = {
    "name": "gke-gcsfuse-sidecar",
    "restartPolicy": "Always",
    "securityContext": {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
        "runAsNonRoot": True,
        "runAsUser": 65534,
        "runAsGroup": 65534,
    },
    "volumeMounts": [
        {"name": "gke-gcsfuse-tmp", "mountPath": "/gcsfuse-tmp"},
        {"name": "gke-gcsfuse-buffer", "mountPath": "/gcsfuse-buffer"},
        {"name": "gke-gcsfuse-cache", "mountPath": "/gcsfuse-cache"},
    ],
}
FUSE_VOLUMES = ("gke-gcsfuse-tmp", "gke-gcsfuse-buffer", "gke-gcsfuse-cache")
GATE_CONTAINER = "haproxy"


@pytest.fixture(scope="module")
def plans() -> dict[str, render.Plan]:
    return {name: shared.render(name, path) for name, path in STACK_FILES.items()}


def _namespace(plan: render.Plan) -> str:
    assert plan.config is not None
    return plan.config.namespace


def pod_templates(plan: render.Plan) -> Iterator[tuple[str, dict[str, Any]]]:
    """(kind/name, pod template) of every pod-making object in the workload namespace."""
    for obj in plan.manifests:
        if obj.get("kind") not in POD_KINDS:
            continue
        if obj.get("metadata", {}).get("namespace") != _namespace(plan):
            continue
        spec = obj["spec"]
        if obj["kind"] == "CronJob":
            spec = spec["jobTemplate"]["spec"]
        template = obj if obj["kind"] == "Pod" else spec["template"]
        yield f"{obj['kind']}/{obj['metadata']['name']}", template


def admitted(template: dict[str, Any]) -> dict[str, Any]:
    """The pod spec the API server admits: with GKE's FUSE sidecar and its volumes injected
    where the pod asks for them (the webhook skips volumes the pod already defines)."""
    spec = copy.deepcopy(template["spec"])
    if template.get("metadata", {}).get("annotations", {}).get(FUSE_VOLUMES_ANNOTATION) == "true":
        spec["initContainers"] = [copy.deepcopy(FUSE_SIDECAR), *spec.get("initContainers", [])]
        own = {v["name"] for v in spec.get("volumes", [])}
        spec["volumes"] = [
            *spec.get("volumes", []),
            *({"name": n, "emptyDir": {}} for n in FUSE_VOLUMES if n not in own),
        ]
    return spec


def _containers(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(field) or []:
            yield f'{field[:-1]} "{c["name"]}"', c


def restricted_violations(spec: dict[str, Any]) -> list[str]:
    """Each Pod Security control (baseline and restricted) the pod spec fails, by name."""
    found: list[str] = []
    pod_sc = spec.get("securityContext") or {}
    # Baseline: Host Namespaces; HostProcess; Host Ports; Sysctls; AppArmor; SELinux; /proc Mount.
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            found.append(f"Host Namespaces: spec.{field} must be unset or false")
    for sysctl in pod_sc.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            found.append(f"Sysctls: {sysctl.get('name')} is not a safe sysctl")
    if (pod_sc.get("seLinuxOptions") or {}).get("user") or (pod_sc.get("seLinuxOptions") or {}).get(
        "role"
    ):
        found.append("SELinux: spec.securityContext.seLinuxOptions user/role must be unset")
    if (pod_sc.get("appArmorProfile") or {}).get("type") not in (
        None,
        "RuntimeDefault",
        "Localhost",
    ):
        found.append("AppArmor: the pod's appArmorProfile must be RuntimeDefault or Localhost")
    if (pod_sc.get("windowsOptions") or {}).get("hostProcess"):
        found.append("HostProcess: the pod must not be a Windows HostProcess pod")
    # Restricted: Volume Types (also Baseline's HostPath Volumes).
    for volume in spec.get("volumes") or []:
        sources = set(volume) - {"name"}
        if not sources <= RESTRICTED_VOLUMES:
            found.append(
                f'Volume Types: volume "{volume["name"]}" uses {sorted(sources)}; restricted '
                f"allows only {sorted(RESTRICTED_VOLUMES)}"
            )
    pod_seccomp = (pod_sc.get("seccompProfile") or {}).get("type")
    if pod_seccomp not in (None, "RuntimeDefault", "Localhost"):
        found.append(f"Seccomp: spec.securityContext.seccompProfile.type is {pod_seccomp}")
    if pod_sc.get("runAsUser") == 0:
        found.append("Running as Non-root user: spec.securityContext.runAsUser must not be 0")
    for where, c in _containers(spec):
        sc = c.get("securityContext") or {}
        if sc.get("privileged"):
            found.append(f"Privileged Containers: {where} sets privileged: true")
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            found.append(f"HostProcess: {where} sets windowsOptions.hostProcess")
        if any(p.get("hostPort") for p in c.get("ports") or []):
            found.append(f"Host Ports: {where} sets a hostPort")
        if sc.get("procMount") not in (None, "Default"):
            found.append(f"/proc Mount Type: {where} sets procMount {sc['procMount']}")
        if (sc.get("seLinuxOptions") or {}).get("user") or (sc.get("seLinuxOptions") or {}).get(
            "role"
        ):
            found.append(f"SELinux: {where} sets seLinuxOptions user/role")
        if (sc.get("appArmorProfile") or {}).get("type") not in (
            None,
            "RuntimeDefault",
            "Localhost",
        ):
            found.append(f"AppArmor: {where} appArmorProfile must be RuntimeDefault or Localhost")
        if sc.get("allowPrivilegeEscalation") is not False:
            found.append(
                f"Privilege Escalation: {where} must set securityContext.allowPrivilegeEscalation"
                " to false"
            )
        non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
        if non_root is not True:
            found.append(
                f"Running as Non-root: {where} needs runAsNonRoot: true (its own or the pod's)"
            )
        if sc.get("runAsUser") == 0:
            found.append(f"Running as Non-root user: {where} sets runAsUser: 0")
        seccomp = (sc.get("seccompProfile") or {}).get("type", pod_seccomp)
        if seccomp not in ("RuntimeDefault", "Localhost"):
            found.append(
                f"Seccomp: {where} needs seccompProfile.type RuntimeDefault or Localhost (its "
                f"own or the pod's), has {seccomp}"
            )
        capabilities = sc.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            found.append(f"Capabilities: {where} must drop ALL")
        added = set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}
        if added:
            found.append(f"Capabilities: {where} adds {sorted(added)}; only NET_BIND_SERVICE")
    return found


def test_every_shipped_stack_has_pods_to_check(plans: dict[str, render.Plan]) -> None:
    assert all(list(pod_templates(plan)) for plan in plans.values()), (
        "a stack without a pod in the workload namespace would make the checks below vacuous"
    )
    assert any(
        FUSE_VOLUMES_ANNOTATION in t.get("metadata", {}).get("annotations", {})
        for plan in plans.values()
        for _, t in pod_templates(plan)
    ), "fast-start's modelCache pod carries the FUSE sidecar: the injected pod is checked too"


def test_the_workload_namespace_enforces_pod_security_restricted(
    plans: dict[str, render.Plan],
) -> None:
    assert POD_SECURITY_LABELS["pod-security.kubernetes.io/enforce"] == "restricted"
    for name, plan in plans.items():
        namespaces = [
            r.inputs
            for r in plan.recording.of_type(NAMESPACE)
            if r.inputs["metadata"]["name"] == _namespace(plan)
        ]
        assert len(namespaces) == 1, name
        labels = namespaces[0]["metadata"]["labels"]
        assert labels.get("pod-security.kubernetes.io/enforce") == "restricted", (
            f"{name}: baseline admits pods that run as root; the namespace must refuse them"
        )


@pytest.mark.parametrize("stack", sorted(STACK_FILES))
def test_every_pod_in_the_workload_namespace_passes_restricted(
    plans: dict[str, render.Plan], stack: str
) -> None:
    problems = [
        f"{where}: {problem}"
        for where, template in pod_templates(plans[stack])
        for problem in restricted_violations(admitted(template))
    ]
    assert not problems, (
        f"{stack}: the namespace enforces Pod Security restricted, so the API server refuses "
        "these pods and `pulumi up` waits for replicas that never come:\n" + "\n".join(problems)
    )


def test_the_checker_catches_each_restricted_control() -> None:
    good = {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "c",
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
            }
        ],
        "volumes": [{"name": "v", "emptyDir": {}}],
    }
    assert restricted_violations(good) == []
    breaks = {
        "Volume Types": lambda s: s["volumes"].append({"name": "h", "hostPath": {"path": "/"}}),
        "Privilege Escalation": lambda s: s["containers"][0]["securityContext"].pop(
            "allowPrivilegeEscalation"
        ),
        "Running as Non-root:": lambda s: s["securityContext"].pop("runAsNonRoot"),
        "Running as Non-root user": lambda s: s["securityContext"].update(runAsUser=0),
        "Seccomp": lambda s: s["securityContext"].pop("seccompProfile"),
        "Capabilities": lambda s: s["containers"][0]["securityContext"]["capabilities"].update(
            add=["SYS_ADMIN"]
        ),
        "Host Namespaces": lambda s: s.update(hostNetwork=True),
        "Host Ports": lambda s: s["containers"][0].update(ports=[{"hostPort": 80}]),
    }
    for control, breaker in breaks.items():
        spec = copy.deepcopy(good)
        breaker(spec)
        assert any(p.startswith(control) for p in restricted_violations(spec)), control


@pytest.mark.parametrize("stack", sorted(STACK_FILES))
def test_every_container_runs_as_a_non_root_uid_on_a_read_only_root(
    plans: dict[str, render.Plan], stack: str
) -> None:
    for where, template in pod_templates(plans[stack]):
        spec = template["spec"]
        uid = spec["securityContext"].get("runAsUser")
        assert uid is not None and uid >= 10000, (
            f"{stack} {where}: a uid named in the pod (not the image's, which is root for vLLM "
            f"and CUDA) and above the node's own users; got {uid}"
        )
        for c in spec["containers"]:
            assert c["securityContext"].get("readOnlyRootFilesystem") is True, (
                f"{stack} {where}: nothing the server does should change its own image"
            )
            if c["name"] == GATE_CONTAINER:
                continue  # HAProxy writes nothing (components/service/gate.py)
            mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
            assert "/tmp" in mounts, (
                f"{stack} {where}: Python, torch and CUDA write to /tmp; it must stay writable"
            )


def _workload_env(plan: render.Plan, name: str) -> dict[str, str]:
    (template,) = [t for w, t in pod_templates(plan) if w.endswith(f"/{name}")]
    (container,) = template["spec"]["containers"]
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def test_a_vllm_server_keeps_home_and_its_caches_on_the_cache_disk(
    plans: dict[str, render.Plan],
) -> None:
    env = _workload_env(plans["dev"], "llm")
    assert env["HOME"] == "/cache" and env["XDG_CACHE_HOME"] == "/cache", (
        "vLLM, Triton and FlashInfer write under ~ and $XDG_CACHE_HOME: on the cache disk they "
        "count against no node's ephemeral storage and survive the read-only root"
    )
    assert env["HF_HOME"] == "/cache/huggingface", "the model download lands on the disk"
    assert env["VLLM_CACHE_ROOT"] == "/cache/vllm", "torch.compile caches land on the disk"
    assert env["USER"], "getpass.getuser() fails for a uid the image's /etc/passwd lacks"


def test_a_workload_without_a_cache_gets_a_writable_home(plans: dict[str, render.Plan]) -> None:
    plan = plans["compact"]
    (_, template) = next(pod_templates(plan))
    spec = template["spec"]
    (container,) = spec["containers"]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert env["HOME"] == HOME_PATH and HOME_PATH in mounts, (
        "a uid without a passwd entry gets HOME=/, which a read-only root cannot write"
    )
    assert "emptyDir" in volumes[mounts[HOME_PATH]]


def _stack(workload: dict[str, Any]) -> dict[str, Any]:
    return {
        **MINIMAL,
        "gke-gpu:cluster": {"mode": "autopilot", "deletionProtection": False},
        "gke-gpu:workloads": [{"name": "llm", "gpu": {"type": "nvidia-l4"}, **workload}],
    }


def _load(config: dict[str, Any]):  # noqa: ANN202 - the StackConfig
    raw = {k.removeprefix("gke-gpu:"): v for k, v in config.items() if k.startswith("gke-gpu:")}
    return load(raw, project="acme-ml-test", region="us-central1", stack="test")


def test_run_as_user_chooses_the_uid_and_gid() -> None:
    (w,) = _load(
        _stack({"image": "quay.io/jupyter/base-notebook:2025-01-06", "runAsUser": 1000})
    ).workloads
    assert w.run_as_user == 1000
    (w,) = _load(_stack({"image": "nvidia/cuda:12.4.1-base-ubuntu22.04"})).workloads
    assert w.run_as_user == RUN_AS_USER, "non-root unless runAsUser says otherwise"


def test_read_only_root_filesystem_can_be_turned_off_per_workload(run: Run) -> None:
    config = _stack(
        {"image": "nvidia/cuda:12.4.1-base-ubuntu22.04", "readOnlyRootFilesystem": False}
    )
    recording = run(config)
    (container,) = recording.served("kubernetes:apps/v1:Deployment").inputs["spec"]["template"][
        "spec"
    ]["containers"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is False


def test_a_destination_range_that_is_no_cidr_is_reported_by_key_path() -> None:
    config = _stack(
        {
            "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
            "egress": {"destinationRanges": ["10.20.0.0/16", "10.20.0.1/16", "mirror.local"]},
        }
    )
    with pytest.raises(ConfigError) as error:
        _load(config)
    text = "\n".join(error.value.problems)
    assert "workloads[0].egress.destinationRanges[1]" in text and "host bits" in text
    assert "workloads[0].egress.destinationRanges[2]" in text
    assert "destinationRanges[0]" not in text


def _policies(plan: render.Plan) -> dict[str, dict[str, Any]]:
    return {
        o["metadata"]["name"]: o["spec"]
        for o in plan.manifests
        if o.get("kind") == "NetworkPolicy" and o["metadata"].get("namespace") == _namespace(plan)
    }


def _egress_for(plan: render.Plan, labels: dict[str, str]) -> list[dict[str, Any]]:
    """Every egress rule of the namespace's policies that select pods with these labels."""
    rules: list[dict[str, Any]] = []
    for spec in _policies(plan).values():
        if "Egress" not in spec.get("policyTypes", []):
            continue
        wanted = spec["podSelector"].get("matchLabels", {})
        if all(labels.get(k) == v for k, v in wanted.items()):
            rules += spec.get("egress", [])
    return rules


def test_every_shipped_stack_denies_egress_but_dns_by_default(
    plans: dict[str, render.Plan],
) -> None:
    for name, plan in plans.items():
        policies = _policies(plan)
        assert policies.get("default-deny-egress") == egress.DEFAULT_DENY_EGRESS, (
            f"{name}: without a default deny, a compromised server reaches the VPC and the "
            "node's metadata server"
        )
        assert policies["allow-dns"]["egress"] == egress.DNS_EGRESS, (
            f"{name}: every pod resolves names (the gate resolves its upstream at run time)"
        )


def test_a_gate_reaches_only_its_model_pods(plans: dict[str, render.Plan]) -> None:
    plan = plans["prod"]
    gate = {"app.kubernetes.io/name": "gke-gpu-gate", "app.kubernetes.io/instance": "llm"}
    rules = [r for r in _egress_for(plan, gate) if r not in egress.DNS_EGRESS]
    assert rules == [
        {
            "to": [
                {
                    "podSelector": {
                        "matchLabels": {
                            "app.kubernetes.io/name": "llm",
                            "app.kubernetes.io/part-of": "gke-gpu",
                        }
                    }
                }
            ],
            "ports": [{"protocol": "TCP", "port": 8000}],
        }
    ], "the gate forwards to the model's port and reaches nothing else"


def test_a_sleeping_models_gate_reaches_only_kedas_interceptor(
    plans: dict[str, render.Plan],
) -> None:
    plan = plans["dev"]
    gate = {"app.kubernetes.io/name": "gke-gpu-gate", "app.kubernetes.io/instance": "llm"}
    rules = [r for r in _egress_for(plan, gate) if r not in egress.DNS_EGRESS]
    interceptor = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "keda"}},
        "podSelector": {
            "matchLabels": {
                "app.kubernetes.io/component": "add-on",
                "app.kubernetes.io/instance": "interceptor",
                "app.kubernetes.io/name": "http",
                "app.kubernetes.io/part-of": "keda",
            }
        },
    }
    assert rules == [{"to": [interceptor], "ports": [{"protocol": "TCP", "port": 8080}]}], (
        "dev's model sleeps: its gate forwards to KEDA's interceptor's proxy port, nothing else"
    )
    (admit,) = [
        r.inputs["spec"]
        for r in plan.recording.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if r.inputs["metadata"]["name"] == "llm-from-gate"
    ]
    assert admit["ingress"] == [
        {"from": [interceptor], "ports": [{"protocol": "TCP", "port": 8000}]}
    ], (
        "the model's pods admit only the interceptor, on the model port: the gate never "
        "reaches them directly, and nothing else in the cluster does"
    )
    (interceptor_pods,) = [
        r.inputs["spec"]["template"]["metadata"]["labels"]
        for r in plan.recording.of_type("kubernetes:apps/v1:Deployment")
        if r.inputs["metadata"]["name"] == "keda-add-ons-http-interceptor"
    ]
    assert interceptor["podSelector"]["matchLabels"].items() <= interceptor_pods.items(), (
        "the policies select the interceptor's real pod labels (from the vendored manifest)"
    )


def _model_labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "gke-gpu"}


def test_a_vllm_server_that_downloads_its_model_reaches_public_https_only(
    plans: dict[str, render.Plan],
) -> None:
    rules = [
        r for r in _egress_for(plans["dev"], _model_labels("llm")) if r not in egress.DNS_EGRESS
    ]
    assert rules == [egress.internet_rule()], (
        "the Hugging Face Hub is HTTPS on public addresses; the VPC, the cluster and the "
        "metadata server stay out of reach"
    )
    (block,) = rules[0]["to"]
    assert "169.254.0.0/16" in block["ipBlock"]["except"], "no node credentials"


def test_a_job_that_downloads_nothing_reaches_nothing_but_dns(
    plans: dict[str, render.Plan],
) -> None:
    rules = _egress_for(plans["compact"], _model_labels("smi"))
    assert rules == egress.DNS_EGRESS


def test_a_model_cache_pod_reaches_cloud_storage_and_the_metadata_server(
    plans: dict[str, render.Plan],
) -> None:
    rules = _egress_for(plans["fast-start"], _model_labels("llm"))
    assert egress.internet_rule() in rules, "vLLM's streamer reads storage.googleapis.com"
    admitted = {
        (peer["ipBlock"]["cidr"], port["port"])
        for rule in rules
        for peer in rule.get("to", [])
        for port in rule.get("ports", [])
        if peer.get("ipBlock", {}).get("cidr", "").startswith("169.254.")
    }
    assert admitted == {("169.254.169.252/32", 988), ("169.254.169.254/32", 80)}, (
        "the GKE metadata server as Google's Workload Identity page names it (the streamer's "
        f"token), and no other link-local address or port: {admitted}"
    )


def test_egress_can_be_widened_per_workload(run: Run) -> None:
    config = _stack(
        {
            "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
            "egress": {"internet": True, "destinationRanges": ["10.20.0.0/16"]},
        }
    )
    recording = run(config)
    (policy,) = [
        r.inputs
        for r in recording.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if r.inputs["metadata"]["name"] == "llm-egress"
    ]
    assert policy["spec"]["egress"] == [
        egress.internet_rule(),
        {"to": [{"ipBlock": {"cidr": "10.20.0.0/16"}}]},
    ]


def test_the_new_policies_have_stable_names(plans: dict[str, render.Plan]) -> None:
    names = {r.name for r in plans["dev"].recording.resources}
    assert {
        "namespace-deny-egress",
        "namespace-allow-dns",
        "workload-llm-egress",
        "gate-llm-egress",
    } <= names, "URNs are a contract: renaming these replaces the policies on every stack"
