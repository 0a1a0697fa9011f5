#!/usr/bin/env bash
# Are the offline plans of every shipped stack byte-identical to a recorded baseline? For moves
# that must change nothing a user sees (issue 32): record once before, compare after each step.
#
#   dev/plans_identical.sh record  /tmp/plans-base   # before changing code
#   dev/plans_identical.sh compare /tmp/plans-base   # after: exit 1 on any difference
#
# Renders every stack .ci/run renders (Pulumi.*.yaml at the root, examples/, the cloud-test stack)
# and tests/stacks/, with `python -m tools.render <stack> [--stack-file F] --out DIR/<stack>`, and
# keeps each run's printed summary and exit code beside the files it wrote (plan.json,
# manifests.yaml, graph.md), the output directory's path replaced by OUT so that two directories
# compare. `compare` renders into a fresh directory next to the baseline and runs `diff -r`.
#
# manifests.yaml lists the objects in the order the engine registered them, which varies from run
# to run of the same code (the SDK resolves inputs concurrently: render dev twice and compare). So
# its documents are compared as a set: manifests.sorted.yaml holds the same documents, each
# byte-for-byte as written, sorted by their text; the raw file is kept but not compared.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: $0 record|compare DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
action=$1
base=${2%/}
case "$action" in
  record) out=$base ;;
  compare)
    [ -d "$base" ] || { echo "$base: no baseline (run: $0 record $base)" >&2; exit 2; }
    out=$base.now
    ;;
  *) usage ;;
esac

# stack name and stack file, one pair a line.
stacks() {
  for f in Pulumi.*.yaml examples/Pulumi.*.yaml tests/stacks/Pulumi.*.yaml \
    .github/cloud-test/Pulumi.cloud-test.yaml; do
    name=${f##*Pulumi.}
    [ "$name" = yaml ] && continue # Pulumi.yaml: the project file, not a stack
    echo "${name%.yaml} $f"
  done
}

rm -rf "$out"
mkdir -p "$out"
count=0
while read -r stack file; do
  dir=$out/$stack
  mkdir -p "$dir"
  status=0
  .venv/bin/python -m tools.render "$stack" --stack-file "$file" --out "$dir" \
    >"$dir/stdout.txt" 2>"$dir/stderr.txt" || status=$?
  echo "$status" >"$dir/exit-code.txt"
  sed -i "s#$dir#OUT#g" "$dir/stdout.txt" "$dir/stderr.txt"
  if [ -f "$dir/manifests.yaml" ]; then
    # A document starts at a line `---` (indented block scalars cannot hold one at column 0).
    .venv/bin/python -c 'import re, sys
text = open(sys.argv[1]).read()
docs = [d if d.endswith("\n") else d + "\n" for d in re.split(r"(?m)^---\n", text) if d]
sys.stdout.write("---\n".join(sorted(docs)))' "$dir/manifests.yaml" >"$dir/manifests.sorted.yaml"
  fi
  count=$((count + 1))
done < <(stacks)
echo "rendered $count stacks into $out"

[ "$action" = compare ] || exit 0
if diff -r --exclude=manifests.yaml "$base" "$out"; then
  echo "identical: all $count stacks' plan.json, manifests (as a set), graph.md, summary, exit code"
else
  echo "DIFFERENT: see the diff above ($base vs $out)" >&2
  exit 1
fi
