"""The schema the component package's provider host serves (issue 41), built without the host.

`python -m tools.package_schema` builds the Pulumi package schema of components.package.HOSTED
as provider/__main__.py serves it (over gRPC, `GetSchema`), but in this process: no gRPC server,
no engine. The release workflow (.github/workflows/release.yml) attaches it to the GitHub release
as schema.json, so a consumer can read the types, inputs and outputs of a version without
cloning the repository or running `pulumi package get-schema`.

    python -m tools.package_schema                      # the schema, as JSON, on stdout
    python -m tools.package_schema --out schema.json    # written to a file
    python -m tools.package_schema --check              # exit 1, one line per problem

`--check` holds the schema to what a release promises: its version is pyproject.toml's (the tag,
the wheel and the schema name one version), and every hosted component is a resource under its
type token `gke-gpu:index:<Class>` (the consumers' contract, CHANGELOG.md). `--out` and `--check`
combine: the file is written either way, and the exit code says whether it holds.

How the schema is built: `components.serve.package_schema(version)` when that module provides it
(the one the provider host serves from), else what provider/__main__.py does today, the SDK's
`ComponentProvider(list(HOSTED), NAME, None, version).schema` (pulumi 3.272.0
provider/experimental/component.py: the analyzer reads the components' Args, generate_schema
writes the JSON `GetSchema` returns).
"""

import argparse
import json
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from components.package import HOSTED, NAME

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"

EXIT_OK = 0
EXIT_PROBLEMS = 1


def project_version(pyproject: Path = PYPROJECT) -> str:
    """The package's version, pyproject.toml's: the one provider/__main__.py serves."""
    with pyproject.open("rb") as f:
        return tomllib.load(f)["project"]["version"]


def token(component: type) -> str:
    """The type token a component is served and registered under."""
    return f"{NAME}:index:{component.__name__}"


def build_schema(version: str) -> dict[str, Any]:
    """The schema the provider host serves for `version`, as a dict."""
    try:
        from components.serve import (  # pyright: ignore[reportMissingImports]
            package_schema,
        )
    except ImportError as error:
        # Only a missing components.serve (or one without package_schema yet) falls back: an
        # import that fails inside it is a bug the release must not paper over.
        if error.name != "components.serve":
            raise
        return _sdk_schema(version)
    schema: dict[str, Any] = package_schema(version)
    return schema


def _sdk_schema(version: str) -> dict[str, Any]:
    """What provider/__main__.py's component_provider_host serves, without serving it."""
    from pulumi.provider.experimental.component import ComponentProvider

    text = ComponentProvider(list(HOSTED), NAME, None, version).schema
    if text is None:
        raise RuntimeError("the SDK's ComponentProvider built no schema")
    schema: dict[str, Any] = json.loads(text)
    return schema


def problems(schema: dict[str, Any], version: str) -> list[str]:
    """What keeps `schema` from being the release of `version`: one line each, none if it holds."""
    found = []
    if schema.get("name") != NAME:
        found.append(
            f"schema name {schema.get('name')!r}, expected {NAME!r}: every type token and "
            "`pulumi package add` name the package by it"
        )
    if schema.get("version") != version:
        found.append(
            f"schema version {schema.get('version')!r}, pyproject.toml says {version!r}: the "
            "schema, the wheel and the tag must name one version"
        )
    resources = schema.get("resources") or {}
    for component in HOSTED:
        if token(component) not in resources:
            found.append(
                f"{token(component)} is hosted (components/package.py HOSTED) but not in the "
                "schema's resources: consumers in other languages would get no type for it"
            )
    return found


def write(schema: dict[str, Any], out: Path) -> None:
    """The schema as JSON: sorted keys, two-space indent, so releases diff cleanly."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(schema, sort_keys=True, indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.package_schema",
        description="The component package's schema, as the provider host serves it.",
    )
    parser.add_argument("--out", type=Path, help="write the schema (JSON) to this file")
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless the schema has pyproject.toml's version and every hosted component",
    )
    args = parser.parse_args(argv)
    version = project_version()
    schema = build_schema(version)
    if args.out is not None:
        write(schema, args.out)
    elif not args.check:
        print(json.dumps(schema, sort_keys=True, indent=2))
    if not args.check:
        return EXIT_OK
    found = problems(schema, version)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        return EXIT_PROBLEMS
    print(f"schema of {NAME} {version}: {len(HOSTED)} hosted components, each under its token")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
