"""A Kubernetes control plane on 127.0.0.1, from the binaries tools/real/build makes: etcd,
kube-apiserver, kube-controller-manager and kube-scheduler as a cluster runs them, and KWOK in the
kubelets' place (no container runtime runs here: KWOK keeps the Node objects Ready with leases
and moves pods bound to them to Running, and a Job's pods to Succeeded). Everything listens on
loopback only and stops when the tests end.

What is real: the API server (validation, defaulting, admission, CEL rules, server-side apply,
RBAC), the controllers (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, garbage collector,
namespace deletion) and the scheduler (filters, taints, resources, node affinity). What is
simulated: the kubelets (KWOK, sigs.k8s.io/kwok, the field's own tool for this).
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Ports below the kernel's ephemeral range (which hands ports to other listeners and outgoing
# connections at any moment), in a block of their own: tests/test_gate.py's free_port says why.
_PORT_BASE = 20000 + (os.getpid() % 40) * 100


def free_port() -> int:
    """A loopback port no socket holds now."""
    for port in range(_PORT_BASE, _PORT_BASE + 100):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        if port not in _TAKEN:
            _TAKEN.add(port)
            return port
    raise AssertionError(f"no free port in {_PORT_BASE}..{_PORT_BASE + 99}")


_TAKEN: set[int] = set()


@dataclass
class ControlPlane:
    """A running control plane: its address, an admin kubeconfig, and kubectl against it."""

    bin_dir: Path
    workdir: Path
    server: str
    token: str
    kubeconfig: Path
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        """kubectl against this plane: its stdout, or AssertionError with its stderr."""
        result = subprocess.run(
            [str(self.bin_dir / "kubectl"), f"--kubeconfig={self.kubeconfig}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout if result.returncode == 0 else result.stderr

    def get(self, *args: str) -> Any:
        """`kubectl get ... -o json`, parsed."""
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def wait_for(self, what: str, predicate: Any, timeout: float = 90.0) -> Any:
        """Polls `predicate()` until it returns something truthy; that, or AssertionError naming
        `what` and the last value."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            last = predicate()
            if last:
                return last
            time.sleep(0.5)
        raise AssertionError(f"{what}: not true after {timeout:.0f} s (last: {last!r})")

    def log(self, name: str) -> str:
        """The last 4,000 characters a component wrote: what a failing test shows."""
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        """Each component in the reverse order of its start, once the one started after it has
        exited: the API server shuts down in about a second while etcd still answers, but waits
        out the 15 s (and is killed) when etcd went first."""
        for process in reversed(list(self.processes.values())):
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _write_service_account_key(workdir: Path) -> tuple[Path, Path]:
    """The key the API server signs service-account tokens with, and its public half."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = workdir / "sa.key"
    public = workdir / "sa.pub"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


def _kubeconfig(path: Path, server: str, token: str) -> None:
    """An admin kubeconfig (a token of group system:masters); the API server's certificate is its
    own self-signed one, so the client does not verify it: loopback only."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "local", "cluster": {"server": server, "insecure-skip-tls-verify": True}}
        ],
        "users": [{"name": "admin", "user": {"token": token}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": "admin"}}],
        "current-context": "local",
    }
    path.write_text(json.dumps(config))
    path.chmod(0o600)


def _start(plane: ControlPlane, name: str, args: list[str]) -> None:
    log = (plane.workdir / f"{name}.log").open("wb")
    plane.processes[name] = subprocess.Popen(
        [str(plane.bin_dir / name.split("#")[0]), *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=plane.workdir,
        start_new_session=True,
    )


def _ready(plane: ControlPlane) -> bool:
    request = urllib.request.Request(
        f"{plane.server}/readyz", headers={"Authorization": f"Bearer {plane.token}"}
    )
    context = ssl._create_unverified_context()  # the server's self-signed certificate, loopback
    try:
        with urllib.request.urlopen(request, context=context, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def _wait(plane: ControlPlane, name: str, predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for component, process in plane.processes.items():
            if process.poll() is not None:
                raise AssertionError(
                    f"{component} exited ({process.returncode}) while waiting for {name}:\n"
                    + plane.log(component)
                )
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"{name} not ready after {timeout:.0f} s:\n" + plane.log(name))


def start(bin_dir: Path, workdir: Path) -> ControlPlane:
    """Starts etcd, the API server, the controller manager, the scheduler and KWOK; returns once
    the API server is ready and the default service account exists (pods can be created)."""
    workdir.mkdir(parents=True, exist_ok=True)
    token = os.urandom(16).hex()
    api_port, etcd_port, peer_port = free_port(), free_port(), free_port()
    plane = ControlPlane(
        bin_dir, workdir, f"https://127.0.0.1:{api_port}", token, workdir / "kubeconfig"
    )
    _kubeconfig(plane.kubeconfig, plane.server, token)
    (workdir / "tokens.csv").write_text(f'{token},admin,admin,"system:masters"\n')
    sa_key, sa_pub = _write_service_account_key(workdir)
    etcd = f"http://127.0.0.1:{etcd_port}"
    _start(plane, "etcd", [
        f"--data-dir={workdir / 'etcd'}",
        f"--listen-client-urls={etcd}", f"--advertise-client-urls={etcd}",
        f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
        f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
        f"--initial-cluster=default=http://127.0.0.1:{peer_port}",
        "--unsafe-no-fsync",  # a test's data: no need to survive a power cut
    ])  # fmt: skip
    _start(plane, "kube-apiserver", [
        f"--etcd-servers={etcd}",
        "--bind-address=127.0.0.1", f"--secure-port={api_port}", "--advertise-address=127.0.0.1",
        f"--cert-dir={workdir / 'pki'}",
        f"--token-auth-file={workdir / 'tokens.csv'}",
        "--authorization-mode=Node,RBAC",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={sa_pub}", f"--service-account-signing-key-file={sa_key}",
        "--service-cluster-ip-range=10.96.0.0/16",
        "--allow-privileged=true",
    ])  # fmt: skip
    _wait(plane, "kube-apiserver", lambda: _ready(plane), timeout=120)
    common = [
        f"--kubeconfig={plane.kubeconfig}",
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
    ]
    _start(plane, "kube-controller-manager", [
        *common, f"--secure-port={free_port()}",
        f"--service-account-private-key-file={sa_key}",
        f"--root-ca-file={workdir / 'pki' / 'apiserver.crt'}",
        "--use-service-account-credentials=false",
        "--cluster-cidr=10.244.0.0/16", "--allocate-node-cidrs=false",
    ])  # fmt: skip
    _start(plane, "kube-scheduler", [*common, f"--secure-port={free_port()}"])
    _start(plane, "kwok", [
        f"--kubeconfig={plane.kubeconfig}",
        "--manage-all-nodes=false",
        "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
        f"--server-address=127.0.0.1:{free_port()}",
        f"--config={bin_dir.parent / 'share' / 'kwok-stages.yaml'}",
        "--node-lease-duration-seconds=40",
    ])  # fmt: skip

    def default_account() -> bool:
        out = plane.kubectl("get", "serviceaccount", "default", "-n", "default", check=False)
        return "default" in out and "NotFound" not in out

    _wait(plane, "kube-controller-manager", default_account, timeout=90)
    return plane


@contextmanager
def running(bin_dir: Path, workdir: Path) -> Iterator[ControlPlane]:
    plane = start(bin_dir, workdir)
    try:
        yield plane
    finally:
        plane.stop()
