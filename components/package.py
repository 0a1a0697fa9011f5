"""What the multi-language package hosts (issue 33): the one list the provider host
(provider/__main__.py), its tests and docs/package.md read.

Every public component (components/public.py, issue 32: typed Args Pulumi's analyzer reads, a
class or TypedDict the component also accepts as the dict the provider hands over, keyed by
Python names: pulumi 3.272.0 provider/experimental/component.py, ComponentProvider.construct),
and ApiKey. tests/test_package_host.py serves them through the real host, checks their schema and
Constructs each from tests/package_samples.py; a new public component joins by itself and needs
a sample there.
"""

import pulumi

from .public import PUBLIC_COMPONENTS
from .service.apikey import ApiKey

NAME = "gke-gpu"
"""The package's name: every type token is `gke-gpu:index:<Class>`, the tokens the program
registers its components under (URNs and type tokens are the consumers' contract too)."""

HOSTED: tuple[type[pulumi.ComponentResource], ...] = (*PUBLIC_COMPONENTS, ApiKey)
"""The components the provider host serves, in schema order: the platform's (the cluster, built
or existing, its GPU pools, their drivers, the device plugin), the service on it, its API key."""
