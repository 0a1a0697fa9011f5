"""Times the program against the cost of the Pulumi SDKs it needs, side by side.

`python -m dev.benchmark [--runs N]` measures, each as the median of N fresh processes after one
warm-up (so the project's own bytecode is cached, as on a user's second `pulumi up`):
- import floor: `import pulumi, pulumi_gcp, pulumi_kubernetes, ...`; the packages load their
  modules lazily, so this builds almost none of the resource classes;
- sdk floor: import every SDK resource class the program registers (SDK_CLASSES) and the mock
  runtime: what any program registering these resources pays before its own first line;
- evaluate: the program itself under the recording engine (what `pulumi up` runs), for the dev
  stack and a generated Standard stack with 8 GPU pools and 40 exposed workloads;
- render: `python -m tools.render` of the same, which adds the Kubernetes schema validation, the
  policy pack, the summary and the artifacts.
The ratios to hold (issue 20): evaluate dev at most 1.3x the sdk floor, evaluate large at most
2.5x. `dev.benchmark --write-large FILE` writes the large stack file.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from tools.engine import ROOT

IMPORT_FLOOR = (
    "import pulumi, pulumi_gcp, pulumi_kubernetes, pulumi_random, pulumi_tls, pulumi.runtime.mocks"
)
# Type token -> the SDK class that registers it; tests/test_layout.py checks every type the
# shipped stacks register is here, so the floor stays the program's real SDK cost.
SDK_CLASSES = {
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": (
        "pulumi_gcp.artifactregistry.RepositoryIamMember"
    ),
    "gcp:compute/address:Address": "pulumi_gcp.compute.Address",
    "gcp:compute/globalAddress:GlobalAddress": "pulumi_gcp.compute.GlobalAddress",
    "gcp:compute/securityPolicy:SecurityPolicy": "pulumi_gcp.compute.SecurityPolicy",
    "gcp:compute/sSLPolicy:SSLPolicy": "pulumi_gcp.compute.SSLPolicy",
    "gcp:endpoints/service:Service": "pulumi_gcp.endpoints.Service",
    "gcp:certificatemanager/dnsAuthorization:DnsAuthorization": (
        "pulumi_gcp.certificatemanager.DnsAuthorization"
    ),
    "gcp:certificatemanager/certificate:Certificate": "pulumi_gcp.certificatemanager.Certificate",
    "gcp:certificatemanager/certificateMap:CertificateMap": (
        "pulumi_gcp.certificatemanager.CertificateMap"
    ),
    "gcp:certificatemanager/certificateMapEntry:CertificateMapEntry": (
        "pulumi_gcp.certificatemanager.CertificateMapEntry"
    ),
    "gcp:compute/router:Router": "pulumi_gcp.compute.Router",
    "gcp:compute/routerNat:RouterNat": "pulumi_gcp.compute.RouterNat",
    "gcp:container/cluster:Cluster": "pulumi_gcp.container.Cluster",
    "gcp:container/nodePool:NodePool": "pulumi_gcp.container.NodePool",
    "gcp:monitoring/alertPolicy:AlertPolicy": "pulumi_gcp.monitoring.AlertPolicy",
    "gcp:monitoring/dashboard:Dashboard": "pulumi_gcp.monitoring.Dashboard",
    "gcp:monitoring/notificationChannel:NotificationChannel": (
        "pulumi_gcp.monitoring.NotificationChannel"
    ),
    "gcp:projects/iAMMember:IAMMember": "pulumi_gcp.projects.IAMMember",
    "gcp:serviceaccount/account:Account": "pulumi_gcp.serviceaccount.Account",
    "gcp:storage/bucketIAMMember:BucketIAMMember": "pulumi_gcp.storage.BucketIAMMember",
    "kubernetes:autoscaling/v2:HorizontalPodAutoscaler": (
        "pulumi_kubernetes.autoscaling.v2.HorizontalPodAutoscaler"
    ),
    # Custom resources (GKE's ComputeClass, Managed Prometheus' PodMonitoring) share one class.
    "kubernetes:cloud.google.com/v1:ComputeClass": "pulumi_kubernetes.apiextensions.CustomResource",
    "kubernetes:monitoring.googleapis.com/v1:PodMonitoring": (
        "pulumi_kubernetes.apiextensions.CustomResource"
    ),
    "kubernetes:http.keda.sh/v1alpha1:HTTPScaledObject": (
        "pulumi_kubernetes.apiextensions.CustomResource"
    ),
    "kubernetes:keda.sh/v1alpha1:ScaledObject": "pulumi_kubernetes.apiextensions.CustomResource",
    "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration": (
        "pulumi_kubernetes.admissionregistration.v1.MutatingWebhookConfiguration"
    ),
    "kubernetes:batch/v1:CronJob": "pulumi_kubernetes.batch.v1.CronJob",
    **{
        f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}": (
            "pulumi_kubernetes.apiextensions.CustomResource"
        )
        for kind in (
            "AdmissionCheck",
            "ClusterQueue",
            "LocalQueue",
            "ProvisioningRequestConfig",
            "ResourceFlavor",
        )
    },
    **{
        f"kubernetes:{kind}": "pulumi_kubernetes.apiextensions.CustomResource"
        for kind in (
            "gateway.networking.k8s.io/v1:Gateway",
            "gateway.networking.k8s.io/v1:HTTPRoute",
            "networking.gke.io/v1:GCPBackendPolicy",
            "networking.gke.io/v1:GCPGatewayPolicy",
            "networking.gke.io/v1:HealthCheckPolicy",
        )
    },
    "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet": (
        "pulumi_kubernetes.apiextensions.CustomResource"
    ),
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration": (
        "pulumi_kubernetes.admissionregistration.v1.ValidatingWebhookConfiguration"
    ),
    "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition": (
        "pulumi_kubernetes.apiextensions.v1.CustomResourceDefinition"
    ),
    "kubernetes:rbac.authorization.k8s.io/v1:Role": "pulumi_kubernetes.rbac.v1.Role",
    "kubernetes:apps/v1:DaemonSet": "pulumi_kubernetes.apps.v1.DaemonSet",
    "kubernetes:apps/v1:Deployment": "pulumi_kubernetes.apps.v1.Deployment",
    "kubernetes:apps/v1:StatefulSet": "pulumi_kubernetes.apps.v1.StatefulSet",
    "kubernetes:batch/v1:Job": "pulumi_kubernetes.batch.v1.Job",
    "kubernetes:core/v1:ConfigMap": "pulumi_kubernetes.core.v1.ConfigMap",
    "kubernetes:core/v1:Namespace": "pulumi_kubernetes.core.v1.Namespace",
    "kubernetes:core/v1:Secret": "pulumi_kubernetes.core.v1.Secret",
    "kubernetes:core/v1:Service": "pulumi_kubernetes.core.v1.Service",
    "kubernetes:core/v1:ServiceAccount": "pulumi_kubernetes.core.v1.ServiceAccount",
    "kubernetes:networking.k8s.io/v1:NetworkPolicy": (
        "pulumi_kubernetes.networking.v1.NetworkPolicy"
    ),
    "kubernetes:policy/v1:PodDisruptionBudget": "pulumi_kubernetes.policy.v1.PodDisruptionBudget",
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole": (
        "pulumi_kubernetes.rbac.v1.ClusterRole"
    ),
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": (
        "pulumi_kubernetes.rbac.v1.ClusterRoleBinding"
    ),
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": "pulumi_kubernetes.rbac.v1.RoleBinding",
    "kubernetes:apiregistration.k8s.io/v1:APIService": (
        "pulumi_kubernetes.apiregistration.v1.APIService"
    ),
    "kubernetes:helm.sh/v3:Release": "pulumi_kubernetes.helm.v3.Release",
    "pulumi:providers:kubernetes": "pulumi_kubernetes.Provider",
    "random:index/randomPassword:RandomPassword": "pulumi_random.RandomPassword",
    "tls:index/certRequest:CertRequest": "pulumi_tls.CertRequest",
    "tls:index/locallySignedCert:LocallySignedCert": "pulumi_tls.LocallySignedCert",
    "tls:index/privateKey:PrivateKey": "pulumi_tls.PrivateKey",
    "tls:index/selfSignedCert:SelfSignedCert": "pulumi_tls.SelfSignedCert",
}
SDK_FLOOR = (
    IMPORT_FLOOR
    + "; import importlib; "
    + "; ".join(
        f"getattr(importlib.import_module({path.rsplit('.', 1)[0]!r}), {path.rsplit('.', 1)[1]!r})"
        for path in SDK_CLASSES.values()
    )
)
EVALUATE = (
    "import sys; from pathlib import Path; from components.config.source import read_stack_file; "
    "from tools.engine import run_program; p = Path(sys.argv[2]); r = read_stack_file(p); "
    "run_program(r.config, stack=sys.argv[1], secret_keys=r.secret_keys, stack_file=p)"
)
LARGE_POOLS = 8
LARGE_WORKLOADS = 40


def large_stack() -> dict[str, Any]:
    """8 GPU pools and 40 exposed workloads: a big team's Standard cluster."""
    shapes = [("nvidia-l4", 1), ("nvidia-l4", 2), ("nvidia-l4", 4), ("nvidia-tesla-t4", 1)]
    pools = []
    for i in range(LARGE_POOLS):
        gpu, count = shapes[i % len(shapes)]
        pools.append(
            {
                "name": f"pool-{i}",
                "gpu": {"type": gpu, "count": count},
                "spot": i >= len(shapes),
                "maxNodes": 5,
                "zones": ["us-central1-a", "us-central1-b"],
            }
        )
    workloads = []
    for i in range(LARGE_WORKLOADS):
        gpu, count = shapes[i % len(shapes)]
        workloads.append(
            {
                "name": f"svc-{i}",
                "image": "vllm/vllm-openai:v0.6.4",
                "gpu": {"type": gpu, "count": count},
                # One vLLM process per GPU: the model split over all of the pod's GPUs.
                "args": ["--tensor-parallel-size", str(count)] if count > 1 else [],
                "spot": (i // len(shapes)) % 2 == 1,
                "resources": {"cpu": "2", "memory": "8Gi"},
                "probe": {"path": "/health"},
                "expose": {"port": 80, "sourceRanges": ["203.0.113.0/24"]},
            }
        )
    return {
        "config": {
            "gcp:project": "acme-ml-bench",
            "gcp:region": "us-central1",
            "gke-gpu:cluster": {"mode": "standard", "deletionProtection": False},
            "gke-gpu:nodePools": pools,
            "gke-gpu:workloads": workloads,
        }
    }


def _time(argv: list[str], runs: int) -> float:
    # Bytecode as a user's machine keeps it: this workplace sets PYTHONDONTWRITEBYTECODE.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=env)  # warm-up
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=env)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dev.benchmark")
    parser.add_argument("--runs", type=int, default=5, help="processes per measurement")
    parser.add_argument("--write-large", type=Path, help="write the large stack file and exit")
    args = parser.parse_args(argv)
    if args.write_large:
        args.write_large.write_text(yaml.safe_dump(large_stack(), sort_keys=False))
        return 0
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        large = Path(tmp) / "Pulumi.large.yaml"
        large.write_text(yaml.safe_dump(large_stack(), sort_keys=False))
        dev = str(ROOT / "Pulumi.dev.yaml")
        render = [python, "-m", "tools.render"]
        times = {
            "import floor": _time([python, "-c", IMPORT_FLOOR], args.runs),
            "sdk floor": _time([python, "-c", SDK_FLOOR], args.runs),
            "evaluate dev": _time([python, "-c", EVALUATE, "dev", dev], args.runs),
            "evaluate large": _time([python, "-c", EVALUATE, "large", str(large)], args.runs),
            "render dev": _time([*render, "dev", "--out", f"{tmp}/dev"], args.runs),
            "render large": _time(
                [*render, "large", "--stack-file", str(large), "--out", f"{tmp}/large"], args.runs
            ),
        }
    sdk = times["sdk floor"]
    print(
        f"median of {args.runs} processes each, after a warm-up; large = {LARGE_POOLS} pools, "
        f"{LARGE_WORKLOADS} exposed workloads"
    )
    for name, seconds in times.items():
        print(f"  {name:15} {seconds:6.3f} s  {seconds / sdk:5.2f}x sdk floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
