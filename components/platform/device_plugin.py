"""NvidiaDevicePlugin: makes an existing cluster's GPUs schedulable as nvidia.com/gpu."""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml

from ..config import (
    DevicePluginConfig,
    DevicePluginKind,
    DevicePluginSettings,
    NodeLabel,
    typed,
)
from ..config.component_checks import ArgsError, plugin_args_problems
from ..facts.labels import (
    DEVICE_PLUGIN_CONFIG_HASH_ANNOTATION,
    GPU_RESOURCE,
    POD_SECURITY_ENFORCE_LABEL,
)
from ..manifest import manifest

# NVIDIA's static manifest, NVIDIA/k8s-device-plugin deployments/static/nvidia-device-plugin.yml
# at the v0.20.0 release (commit 1b826acc, tagged 2026-08-19, the newest tag; checked 2026-11-22):
# names, labels, toleration, priority class, the kubelet's device-plugin socket directory (a
# hostPath of type Directory) and the unprivileged security context are its own. It has no node
# selector; ours adds the node affinity NVIDIA's Helm chart uses (rules/cluster.py
# NVIDIA_GPU_NODE_LABELS). NVIDIA removed FAIL_ON_INIT_ERROR=false from the static examples
# because it "is a non-recommended setting as failures in loading GPU information is silently
# ignored" (b3d00543); we set it explicitly, true unless devicePlugin.failOnInitError says not.
# The policy pack allows system DaemonSets named nvidia-device-plugin* in kube-system.
NAME = "nvidia-device-plugin-daemonset"
NAMESPACE = "kube-system"
# Pinned by digest (a tag can be moved), the tag kept for readers. NVIDIA publishes no digest in
# the plugin's own repository; its GPU Operator's certified bundle pins this one for the same
# tag: NVIDIA/gpu-operator v26.7.0 (10ee5b36) bundle/manifests/
# gpu-operator-certified.clusterserviceversion.yaml line 266 (device-plugin-image). Two third-party
# manifests found with the code search pin the same digest for v0.20.0. Not resolved against
# nvcr.io from here (`crane digest nvcr.io/nvidia/k8s-device-plugin:v0.20.0` confirms it).
VERSION = "v0.20.0"
IMAGE = (
    f"nvcr.io/nvidia/k8s-device-plugin:{VERSION}"
    "@sha256:a61ba9fd8efb82f3a79f877f7580e02c1e8e7593f62473644bc9c79e315c3312"
)
CONTAINER = "nvidia-device-plugin-ctr"
POD_LABELS = {"name": "nvidia-device-plugin-ds"}
DEVICE_PLUGIN_DIR = "/var/lib/kubelet/device-plugins"
# Time-slicing: the plugin reads a config file named by --config-file or $CONFIG_FILE
# (NVIDIA/k8s-device-plugin README); the file comes from a ConfigMap mounted here.
CONFIG_MAP = "nvidia-device-plugin-config"
CONFIG_DIR = "/etc/nvidia-device-plugin"
CONFIG_FILE = "config.yaml"

# The NVIDIA GPU Operator Helm chart (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/
# getting-started.html: `helm repo add nvidia https://helm.ngc.nvidia.com/nvidia`, chart
# nvidia/gpu-operator, installed into namespace gpu-operator with --version=v<release>).
# v26.7.0 is NVIDIA/gpu-operator's newest release tag (commit 10ee5b36, 2026-08-20; checked
# 2026-11-22); its chart still has driver.enabled and devicePlugin.config.{name,default}.
OPERATOR_REPO = "https://helm.ngc.nvidia.com/nvidia"
OPERATOR_CHART = "gpu-operator"
OPERATOR_VERSION = "v26.7.0"
OPERATOR_NAMESPACE = "gpu-operator"
# The operator's device plugin reads time-slicing configs from a ConfigMap in its namespace:
# devicePlugin.config.name names it, devicePlugin.config.default picks the key every GPU node
# uses (NVIDIA/cloud-native-docs gpu-operator/gpu-sharing.rst).
OPERATOR_SHARING_CONFIG_MAP = "time-slicing-config"
OPERATOR_SHARING_KEY = "any"


@dataclass(frozen=True)
class NvidiaDevicePluginArgs:
    plugin: DevicePluginSettings
    """Which plugin, time-slicing, and the nodes it runs on."""


def time_slicing_config(replicas: int) -> dict[str, Any]:
    """The plugin's config file: each GPU advertised `replicas` times (the README's format).

    failRequestsGreaterThanOne, which NVIDIA's README recommends, fails a container that asks
    for more than one shared GPU instead of handing it several slices of the same GPU.
    """
    return {
        "version": "v1",
        "sharing": {
            "timeSlicing": {
                "failRequestsGreaterThanOne": True,
                "resources": [{"name": GPU_RESOURCE, "replicas": replicas}],
            }
        },
    }


def time_slicing_yaml(replicas: int) -> str:
    return yaml.safe_dump(time_slicing_config(replicas), sort_keys=False)


def node_affinity(terms: Sequence[Sequence[NodeLabel]]) -> dict[str, Any]:
    """Required node affinity: any term, every label of a term (rules/cluster.py)."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": key, "operator": "In", "values": [value]} for key, value in term
                        ]
                    }
                    for term in terms
                ]
            }
        }
    }


def daemonset_spec(
    config_sha256: str | None = None,
    terms: Sequence[Sequence[NodeLabel]] = (),
    fail_on_init_error: bool = True,
) -> dict[str, Any]:
    """NVIDIA's static DaemonSet, on the GPU nodes only; with a config, the time-slicing file
    mounted and named.

    The config's hash is a pod annotation: the plugin reads its config at start, so a changed
    config must roll the pods. FAIL_ON_INIT_ERROR is set either way, so the choice is visible:
    true (NVIDIA's default) exits on a selected node whose GPU cannot be used; false waits there
    forever ("No devices found. Waiting indefinitely.", cmd/nvidia-device-plugin/main.go).
    """
    env: list[dict[str, str]] = [
        {"name": "FAIL_ON_INIT_ERROR", "value": "true" if fail_on_init_error else "false"}
    ]
    mounts: list[dict[str, Any]] = [
        {"name": "kubelet-device-plugins-dir", "mountPath": DEVICE_PLUGIN_DIR}
    ]
    volumes: list[dict[str, Any]] = [
        {
            "name": "kubelet-device-plugins-dir",
            "hostPath": {"path": DEVICE_PLUGIN_DIR, "type": "Directory"},
        }
    ]
    metadata: dict[str, Any] = {"labels": dict(POD_LABELS)}
    if config_sha256 is not None:
        env.append({"name": "CONFIG_FILE", "value": f"{CONFIG_DIR}/{CONFIG_FILE}"})
        mounts.append({"name": "config", "mountPath": CONFIG_DIR, "readOnly": True})
        volumes.append({"name": "config", "configMap": {"name": CONFIG_MAP}})
        metadata["annotations"] = {DEVICE_PLUGIN_CONFIG_HASH_ANNOTATION: config_sha256}
    return {
        "selector": {"matchLabels": dict(POD_LABELS)},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {
            "metadata": metadata,
            "spec": {
                **({"affinity": node_affinity(terms)} if terms else {}),
                "tolerations": [
                    {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
                ],
                # A critical add-on: the scheduler makes room for it on every GPU node.
                "priorityClassName": "system-node-critical",
                "containers": [
                    {
                        "name": CONTAINER,
                        "image": IMAGE,
                        "env": env,
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "volumeMounts": mounts,
                    }
                ],
                "volumes": volumes,
            },
        },
    }


def operator_values(plugin: DevicePluginConfig) -> dict[str, Any]:
    """GPU Operator chart values: whether it installs the driver, and time-slicing."""
    values: dict[str, Any] = {"driver": {"enabled": plugin.install_driver}}
    if plugin.sharing_replicas is not None:
        values["devicePlugin"] = {
            "config": {"name": OPERATOR_SHARING_CONFIG_MAP, "default": OPERATOR_SHARING_KEY}
        }
    return values


class NvidiaDevicePlugin(pulumi.ComponentResource):
    """NVIDIA's device plugin DaemonSet, or the NVIDIA GPU Operator, or nothing (`none`)."""

    name: pulumi.Output[str | None]
    """The DaemonSet's or the Helm release's name; None when the cluster brings its own."""
    daemonset: k8s.apps.v1.DaemonSet | None
    """static: NVIDIA's device plugin DaemonSet."""
    release: k8s.helm.v3.Release | None
    """gpu-operator: the GPU Operator's Helm release."""

    def __init__(
        self, name: str, args: NvidiaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        args = typed.build(NvidiaDevicePluginArgs, args)
        plugin = DevicePluginConfig.of(args.plugin)
        ArgsError.check("NvidiaDevicePlugin", name, plugin_args_problems(plugin))
        super().__init__("gke-gpu:index:NvidiaDevicePlugin", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.daemonset, self.release = None, None
        if plugin.type == DevicePluginKind.STATIC:
            self.name = self._static(name, plugin, child)
        elif plugin.type == DevicePluginKind.GPU_OPERATOR:
            self.name = self._operator(name, plugin)
        else:
            self.name = pulumi.Output.from_input(None)
        self.register_outputs({"name": self.name})

    @property
    def capacity(self) -> list[pulumi.Resource]:
        """What GPU workloads wait for (GpuWorkloadArgs.after): the DaemonSet or the Helm release
        that advertises nvidia.com/gpu; empty with `none`."""
        return [r for r in (self.daemonset, self.release) if r is not None]

    def _static(
        self, name: str, plugin: DevicePluginConfig, child: pulumi.ResourceOptions
    ) -> pulumi.Output[str | None]:
        config_sha256 = None
        depends_on: list[pulumi.Resource] = []
        if plugin.sharing_replicas is not None:
            text = time_slicing_yaml(plugin.sharing_replicas)
            config_sha256 = hashlib.sha256(text.encode()).hexdigest()
            depends_on.append(
                k8s.core.v1.ConfigMap(
                    f"{name}-config",
                    metadata=manifest({"name": CONFIG_MAP, "namespace": NAMESPACE}),
                    data={CONFIG_FILE: text},
                    opts=child,
                )
            )
        daemonset = k8s.apps.v1.DaemonSet(
            f"{name}-daemonset",
            metadata=manifest({"name": NAME, "namespace": NAMESPACE}),
            spec=manifest(
                daemonset_spec(config_sha256, plugin.node_selector_terms, plugin.fail_on_init_error)
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on),
        )
        self.daemonset = daemonset
        return daemonset.metadata.name

    def _operator(self, name: str, plugin: DevicePluginConfig) -> pulumi.Output[str | None]:
        # The operator's driver, toolkit and plugin pods run privileged; NVIDIA's install guide
        # labels the namespace so that Pod Security Admission lets them start.
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=manifest(
                {
                    "name": OPERATOR_NAMESPACE,
                    "labels": {POD_SECURITY_ENFORCE_LABEL: "privileged"},
                }
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        depends_on: list[pulumi.Resource] = []
        if plugin.sharing_replicas is not None:
            depends_on.append(
                k8s.core.v1.ConfigMap(
                    f"{name}-sharing",
                    metadata=manifest(
                        {"name": OPERATOR_SHARING_CONFIG_MAP, "namespace": namespace.metadata.name}
                    ),
                    data={OPERATOR_SHARING_KEY: time_slicing_yaml(plugin.sharing_replicas)},
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )
        # A Helm release, not a v4 Chart: the chart upgrades its CRDs in a pre-upgrade hook
        # (NVIDIA/gpu-operator deployments/gpu-operator/templates/upgrade_crd.yaml), and v4
        # Chart leaves hooks out; a release also shows up in `helm list` like NVIDIA's own steps.
        release = k8s.helm.v3.Release(
            f"{name}-operator",
            name=OPERATOR_CHART,
            chart=OPERATOR_CHART,
            version=OPERATOR_VERSION,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=OPERATOR_REPO),
            namespace=namespace.metadata.name,
            values=operator_values(plugin),
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on),
        )
        self.release = release
        return release.name
