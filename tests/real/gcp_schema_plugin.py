"""A stand-in for the gcp provider plugin that answers GetSchema only, with the one gcp resource
gke-gpu's schema references (GkeCluster's `systemPools`, GpuNodePool's `after`:
gcp:container/nodePool:NodePool).

Why: `pulumi package get-schema` and `pulumi package add` bind the package's schema, and binding
loads every package it references from its provider plugin (pkg/codegen/schema/loader.go,
v3.274.1); the gcp provider is not served by the Go module proxy (tools/real/versions.env), so
without this the real CLI ends with "no resource plugin 'pulumi-resource-gcp' found in the
workspace at version v10.2.0 or on your $PATH". Only the references are served, not gcp's
resources: the SDKs are generated from gke-gpu's schema, exactly as the package serves it.

What the generators read of it, as the real gcp schema has them: its name and version (the
version of pulumi_gcp in .venv, the one gke-gpu's schema asks for), the module format that
makes `container/nodePool` the module `container`, and the Go import path. The one difference:
the Go SDK the proxy serves is github.com/pulumi/pulumi-gcp/sdk/v9 (v9.6.0), where a 10.x schema
names .../sdk/v10 (not served); the path here is v9's, so the Go example builds against v9.6.0.

The engine runs it as `pulumi-resource-gcp <engine address>`; tests/real/test_package_sdks.py
puts a script of that name on PATH.
"""

import importlib.util
import json
import sys
from pathlib import Path

from pulumi.provider import Provider, main


def gcp_version() -> str:
    """The version of pulumi_gcp in this interpreter (its pulumi-plugin.json), without importing
    the SDK (thousands of modules)."""
    spec = importlib.util.find_spec("pulumi_gcp")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pulumi_gcp is not installed in this interpreter")
    folder = Path(next(iter(spec.submodule_search_locations)))
    return json.loads((folder / "pulumi-plugin.json").read_text())["version"]


def schema(version: str) -> dict[str, object]:
    return {
        "name": "gcp",
        "version": version,
        "meta": {"moduleFormat": "(.*)(?:/[^/]*)"},
        "language": {
            "go": {
                "importBasePath": "github.com/pulumi/pulumi-gcp/sdk/v9/go/gcp",
                "generateResourceContainerTypes": True,
            },
        },
        "resources": {
            "gcp:container/nodePool:NodePool": {
                "description": "A GKE node pool (stand-in: references only).",
            },
        },
    }


if __name__ == "__main__":
    version = gcp_version()
    main(Provider(version, json.dumps(schema(version))), sys.argv[1:])
