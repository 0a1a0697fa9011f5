"""The gke-gpu component package's provider host (issue 33): serves components.package.HOSTED
under `gke-gpu:index:<Class>` through Pulumi's component provider (components/serve/).

The engine runs `python <this folder> <engine address>` (provider/PulumiPlugin.yaml says how and
cites where); the plugin prints the port it serves gRPC on.
"""

import sys
import tomllib
from pathlib import Path

# The repository the engine cloned: the library (components/) and pyproject.toml sit beside this
# folder, and Python puts only this folder on sys.path when it runs it.
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.serve import serve  # noqa: E402


def version() -> str:
    """The package's version: the library's (pyproject.toml), so a tag, the schema and the wheel
    agree."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]["version"]


if __name__ == "__main__":
    serve(version())
