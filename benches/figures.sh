#!/usr/bin/env bash
# Every example corpus run by BIN with a fixed run id into OUT, so that two builds' figures can
# be compared byte for byte: a change meant to make calibench faster must leave every
# metrics.json as it was (docs/benchmarks.md, "Same figures").
#
#   benches/figures.sh target/release/calibench /tmp/before     # on the old commit
#   benches/figures.sh target/release/calibench /tmp/after      # on the new one
#   benches/figures.sh --compare /tmp/before /tmp/after
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --compare ]; then
  status=0
  for f in "$2"/runs/*/metrics.json; do
    name=$(basename "$(dirname "$f")")
    if cmp -s "$f" "$3/runs/$name/metrics.json"; then echo "same      $name"; else echo "DIFFERENT $name"; status=1; fi
  done
  exit $status
fi
BIN=$1 OUT=$2
rm -rf "$OUT"
for experiment in corpora/*/experiment.toml; do
  name=$(basename "$(dirname "$experiment")")
  "$BIN" run "$experiment" --runs-dir "$OUT/runs" --reports-dir "$OUT/reports" --run-id "$name" --quiet
done
echo "$(ls "$OUT/runs" | wc -l) runs in $OUT/runs"
