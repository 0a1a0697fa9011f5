"""The component package's provider host (issue 41): what provider/__main__.py serves."""

import sys

from pulumi.provider.server import main

from .provider import GkeGpuProvider, package_schema

__all__ = ["GkeGpuProvider", "package_schema", "serve"]


def serve(version: str) -> None:
    """Serve the hosted components as Pulumi's component_provider_host does (pulumi 3.272.0
    provider/experimental/host.py: the engine's arguments after the plugin's folder), through
    GkeGpuProvider."""
    main(GkeGpuProvider(version), sys.argv[1:])
