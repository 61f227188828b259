#!/usr/bin/env bash
# Every example corpus run by BIN with a fixed run id into OUT, so that two builds' outputs can
# be compared byte for byte: a change meant to make calibench faster, or to move code without
# changing what it does, must leave every output as it was (docs/benchmarks.md, "Same figures").
#
#   benches/figures.sh target/release/calibench /tmp/before     # on the old commit
#   benches/figures.sh target/release/calibench /tmp/after      # on the new one
#   benches/figures.sh --compare /tmp/before /tmp/after
#
# --compare holds every file of every run and report to the other build's: metrics.json, the
# CSV and Parquet tables, trust.json, the sweep's files, the reports and their plots byte for
# byte. The manifests and reports record when they were made and the command line (the
# binary's path): those lines are left out of their comparison, and nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --compare ]; then
  status=0
  # A manifest without its times and command line; a report without its lines that show a time
  # (2026-12-04T22:07:39Z): what differs from run to run.
  strip() {
    case "$1" in
      *.json) python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); [m.pop(k, None) for k in ("command_line", "started_at", "finished_at")]; print(json.dumps(m, indent=1))' "$1" ;;
      *) grep -Ev '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z' "$1" || true ;;
    esac
  }
  for side in "$2" "$3"; do
    [ -d "$side/runs" ] || { echo "no runs in $side"; exit 2; }
  done
  files=$( (cd "$2" && find runs reports -type f; cd "$3" && find runs reports -type f) | sort -u)
  same=0
  for f in $files; do
    if [ ! -f "$2/$f" ] || [ ! -f "$3/$f" ]; then
      echo "ONLY IN ONE $f"; status=1; continue
    fi
    case "$f" in
      */manifest.json|*/report.md|*/report.html|reports/index.html)
        if cmp -s <(strip "$2/$f") <(strip "$3/$f"); then same=$((same + 1)); else echo "DIFFERENT $f"; status=1; fi ;;
      *)
        if cmp -s "$2/$f" "$3/$f"; then same=$((same + 1)); else echo "DIFFERENT $f"; status=1; fi ;;
    esac
  done
  for f in "$2"/runs/*/metrics.json; do
    name=$(basename "$(dirname "$f")")
    if cmp -s "$f" "$3/runs/$name/metrics.json"; then echo "same      $name"; fi
  done
  echo "$same files the same"
  exit $status
fi
BIN=$1 OUT=$2
rm -rf "$OUT"
for experiment in corpora/*/experiment.toml; do
  name=$(basename "$(dirname "$experiment")")
  "$BIN" run "$experiment" --runs-dir "$OUT/runs" --reports-dir "$OUT/reports" --run-id "$name" --quiet
done
echo "$(ls "$OUT/runs" | wc -l) runs in $OUT/runs"
