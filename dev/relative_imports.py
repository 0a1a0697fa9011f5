"""Make the library's own imports relative (issue 33), so components/ imports as `components` in
this repository and as `gke_gpu` from the wheel (pyproject.toml maps the folder to that name).

    .venv/bin/python -m dev.relative_imports          # rewrite, then ruff sorts and formats
    .venv/bin/python -m dev.relative_imports --check  # list what is still absolute; exit 1 if any

Only `from components... import ...` statements inside components/ change (found with ast, so
docstrings and comments that quote one stay as they are); tools/, tests/, policy/, provider/ and
__main__.py import the library as `components`. Re-running it changes nothing.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = "components"


def _package(path: Path) -> list[str]:
    """The package a module's relative imports start from."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts if parts[-1] != "__init__" else parts[:-1]


def _package_of(path: Path) -> list[str]:
    parts = _package(path)
    return parts if path.name == "__init__.py" else parts[:-1]


def relative(package: list[str], target: str) -> str:
    """`target` (components.x.y) as seen from `package`: ..x.y and the like."""
    wanted = target.split(".")
    common = 0
    while common < min(len(package), len(wanted)) and package[common] == wanted[common]:
        common += 1
    return "." * (len(package) - common + 1) + ".".join(wanted[common:])


def absolute_imports(source: str) -> list[ast.ImportFrom]:
    return [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
        and node.level == 0
        and node.module is not None
        and (node.module == LIBRARY or node.module.startswith(LIBRARY + "."))
    ]


def rewrite(path: Path) -> bool:
    """Rewrite one module's absolute library imports; True if it changed."""
    source = path.read_text()
    nodes = absolute_imports(source)
    if not nodes:
        return False
    lines = source.splitlines(keepends=True)
    for node in nodes:
        index = node.lineno - 1
        line = lines[index]
        pattern = re.compile(r"from\s+" + re.escape(node.module or "") + r"(?=\s+import\b)")
        match = pattern.match(line, node.col_offset)
        if match is None:
            raise SystemExit(f"{path}:{node.lineno}: cannot find `from {node.module}` to rewrite")
        new = f"from {relative(_package_of(path), node.module or '')}"
        lines[index] = line[: match.start()] + new + line[match.end() :]
    path.write_text("".join(lines))
    return True


def main(argv: list[str]) -> int:
    modules = sorted((ROOT / LIBRARY).rglob("*.py"))
    if "--check" in argv:
        left = [
            f"{p.relative_to(ROOT)}:{n.lineno} from {n.module}"
            for p in modules
            for n in absolute_imports(p.read_text())
        ]
        print("\n".join(left) or "every import of the library inside it is relative")
        return 1 if left else 0
    changed = [p for p in modules if rewrite(p)]
    ruff = str(Path(sys.executable).parent / "ruff")
    subprocess.run([ruff, "check", "--select", "I", "--fix", "-q", LIBRARY], cwd=ROOT, check=True)
    subprocess.run([ruff, "format", "-q", LIBRARY], cwd=ROOT, check=True)
    print(f"{len(changed)} modules of {LIBRARY}/ now import the library relatively")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
