"""What a rule knows besides the item it checks: the mode, the cluster, and what it may show."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import formats
from .platform_model import DevicePluginConfig, NodePoolConfig
from .problems import under
from .schema import ClusterSpec, Mode

HIDDEN = "(a secret, not shown)"
# A refused map key where which leaves were secret is unknown (Context.key_path).
HIDDEN_KEY = "a key (not shown: this config may hold secrets anywhere)"


@dataclass(frozen=True)
class Context:
    secret_keys: frozenset[str] = frozenset()
    """Top-level keys the engine marked secret: values under them are never shown."""
    secure_paths: frozenset[str] | None = frozenset()
    """Paths of the `secure:` leaves (None: unknown, so every value of a secret key is one)."""
    mode: Mode | None = None
    """cluster.mode, even when `cluster` itself has problems (None: not a mode)."""
    region: str = ""
    project: str = ""
    """gcp:project (an expose.domain of `auto` is named under it)."""
    location: str = ""
    """cluster.location, else the region."""
    cluster: ClusterSpec | None = None
    cluster_name: str = ""
    """The cluster's GKE name (cluster.name, or the stack's default): names derived from it (an
    expose.domain of `auto`) cannot collide with another cluster's of the project."""
    device_plugin: DevicePluginConfig | None = None
    kubeconfig_key: str | None = None
    """cluster.kubeconfig as written (a key name, or the kubeconfig): only ever compared."""
    pools: tuple[NodePoolConfig, ...] = ()
    """Standard: the node pools workloads may land on (their machine not chosen yet)."""
    broken_pool_gpus: frozenset[str] = frozenset()
    """GPU types of pools with problems of their own: no workload is sent looking for them."""
    secret_lengths: Mapping[str, int] = field(default_factory=dict)
    """The length of each top-level key secretEnv names, where the value is known (the engine
    hands it over decrypted; the offline plan has a placeholder): only ever compared."""

    @property
    def existing(self) -> bool:
        return self.mode == "existing"

    @property
    def channel(self) -> str | None:
        return self.cluster.release_channel if self.cluster is not None else None

    def is_secret(self, path: str) -> bool:
        top = path.split(".", 1)[0].split("[", 1)[0]
        if top not in self.secret_keys:
            return False
        if self.secure_paths is None:
            return True  # which leaf was secret is unknown: treat every value as secret
        return any(under(path, p) or under(p, path) for p in self.secure_paths)

    def show(self, path: str, value: Any) -> str:
        return HIDDEN if self.is_secret(path) else formats.show(value)

    def key_path(self, base: str, key: int | str) -> str:
        """The path of a map key the config refuses (unknown, or not a valid name). Keys are
        never `secure:` (Pulumi encrypts values only), so a stack file's are shown; but where
        which leaves were secret is unknown (an ESC environment, `--config-file`), a refused key
        may be a value pasted one level up, so the path stops at `base` and the key is not
        shown."""
        return base if self.hides_keys(base) else formats.join(base, key)

    def hides_keys(self, path: str) -> bool:
        """Refused keys under `path` are not shown (key_path)."""
        return self.secure_paths is None and self.is_secret(path)
