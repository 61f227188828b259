#!/usr/bin/env bash
# calibench benchmark: Krippendorff's alpha at scale, side by side with the Python
# `krippendorff` package on the same matrices, review replay of a million findings and query
# replay of 100,000 queries (docs/benchmarks.md), and one query of 100,000 tool calls.
# Usage: benches/bench.sh [--quick] [ratios] [long] [alpha] [replay] [queries] [wide] [import] [hostile] [install] [sweep] [labels] [sequential] [collect] [instructions] [threads]
# (no section named: all). `ratios` is the turn-5 targets, each measured side by side in one run
# so that it holds on any machine: `run --no-plots` on a million findings in the interleaved
# layout against Python's orjson merely parsing every line of the same file, with peak memory
# against the file's size; a 100-threshold review sweep against one run of the same corpus; a
# sequential collection of 3,000 queries in batches of 10 against a plain collection of them;
# and `merge` of 1,000 shards; beside the run, the floor (examples/parse_floor.rs): what any run of
# the file must do, timed alone, so that the ratio says how much is left for the run's own work. `long` is `calibench alpha` on a long CSV against pandas + krippendorff from the
# same file; `import` is `calibench import inspect` on large .eval logs against inspect_ai's own
# readers (installed into the same throw-away virtualenv). `install` is what a CI job spends
# getting calibench: the release archive installed by scripts/install.sh (from a file:// copy of
# a release: the download itself is the runner's network) against `cargo install --locked` from
# a clean target directory, then the gate on an example. `sweep` is `calibench sweep` of 100
# grid points over the 100,000-query and the 1,000,000-finding corpora, beside what a team
# would run instead: `calibench run --set` once per point (10 of them timed). `labels` is a corpus
# with 1,000,000 human label lines (`run`, `validate`) and `calibench alttest` on a crowd of
# 100,000 annotators who each labelled three units (benches/gen_labels.py). `sequential` is
# what a sequential decision saves: the median units to a decision on seeded simulated streams
# against the fixed sizes `plan` names (examples/sequential_savings.rs), and `run --sequential`
# on 100,000 queries beside the same `run` without it. `collect` is what `calibench collect`
# adds to each reviewer call: 400 calls of a reviewer that answers at once, against the same
# calls made by a shell loop. `instructions` counts what `run` executes on 100,000 findings
# under valgrind's callgrind, a figure the machine's load does not move. `threads` is where the
# million-finding run's processor time goes, by phase and by the thread that spent it (`perf`).
#
# It builds calibench in release mode, makes a throw-away virtualenv under bench-data/ with
# numpy and krippendorff (nothing of theirs is committed), generates the matrices from a fixed
# seed (benches/gen_reliability.py), and prints times, ratios and peak memory.
# --quick uses 100,000 units instead of 1,000,000 for a fast smoke run (and a tenth of the
# findings and queries).
set -euo pipefail
cd "$(dirname "$0")/.."

QUICK=; SECTIONS=
for a in "$@"; do
  case "$a" in
    --quick) QUICK=1 ;;
    ratios|long|alpha|replay|queries|wide|import|hostile|install|sweep|labels|sequential|collect|instructions|threads) SECTIONS="$SECTIONS $a" ;;
    *) echo "usage: benches/bench.sh [--quick] [ratios] [long] [alpha] [replay] [queries] [wide] [import] [hostile] [install] [sweep] [labels] [sequential] [collect] [instructions] [threads]" >&2; exit 2 ;;
  esac
done
[ -n "$SECTIONS" ] || SECTIONS=" ratios long alpha replay queries wide import hostile install sweep labels sequential collect instructions threads"
want() { case "$SECTIONS" in *" $1"*) return 0 ;; *) return 1 ;; esac; }

UNITS=1000000
[ -n "$QUICK" ] && UNITS=100000
RATERS=10
DATA=bench-data
mkdir -p "$DATA"

echo "== building calibench (release)"
cargo build --release --quiet
BIN=target/release/calibench

[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }

# Runs a command under GNU time; `measure3` three times (figures are the fastest run, memory the
# largest), since one run on a shared 2-core machine is noisy.
measure() { # outfile cmd...
  local out=$1; shift
  /usr/bin/time -v "$@" > "$out.stdout" 2> "$out.stderr" || true
}
measure3() { # outfile cmd...
  local out=$1; shift
  for i in 1 2 3; do measure "$out.$i" "$@"; done
  cp "$out.1.stdout" "$out.stdout"; cat "$out".[123].stderr > "$out.stderr"
}
min_of() { sort -g | head -1; }
# Peak resident memory in MiB: /usr/bin/time counts KiB. (Every "peak MiB" below; figures
# quoted before 2026-12-05 wrote these MiB as "MB".)
rss_mb() { awk -F: '/Maximum resident set size/ {if ($2 > m) m = $2} END {printf "%.0f", m/1024}' "$1.stderr"; }
# Processor time (user + system) in seconds, the least of the runs in $1.stderr.
cpu_s() { awk '/User time/ {u=$NF} /System time/ {printf "%.2f\n", u + $NF}' "$1.stderr" | min_of; }
CORES=$(nproc)
wall_s() { awk '/Elapsed \(wall clock\)/ {n=split($NF,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; printf "%.2f\n", s}' "$1.stderr" | min_of; }
phase() { sed -n "s/^timing $2: \([0-9.]*\) s.*/\1/p" "$1.stderr" | min_of; }

if want ratios; then
if ! "$DATA/venv/bin/python" -c "import orjson" 2>/dev/null; then
  echo "== installing orjson into $DATA/venv"
  [ -x "$DATA/venv/bin/python" ] || python3 -m venv "$DATA/venv"
  "$DATA/venv/bin/pip" install --quiet orjson
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
FINDINGS=1000000
[ -n "$QUICK" ] && FINDINGS=100000
LI="$DATA/large-reviews-interleaved-$FINDINGS"
[ -f "$LI/reviews.jsonl" ] || cargo run --release --quiet --example generate_large_reviews -- "$FINDINGS" "$LI" long interleaved
SIZE=$(( $(stat -c %s "$LI/reviews.jsonl") / 1000000 ))
# The file's size in the unit the peaks are in: the memory ratio compares MiB with MiB (until
# 2026-12-05 it set MiB against MB, and read 4.9% low).
SIZE_MIB=$(awk -v b="$(stat -c %s "$LI/reviews.jsonl")" 'BEGIN { printf "%.1f", b / 1048576 }')
RETURNS=$(wc -l < "$LI/reviews.jsonl")
# Alternating, so that a slow moment of the machine falls on both sides.
# The floor (examples/parse_floor.rs): the file read and hashed, every line parsed on two
# threads into nothing, and as many bytes written as the run just wrote. Not the row's figure:
# what is left of orjson's time for the run's own work.
cargo build --release --quiet --example parse_floor
ri="$DATA/out-ratio-run"; pi="$DATA/out-ratio-parse"; fl="$DATA/out-ratio-floor"
for i in 1 2 3; do
  rm -rf "$DATA/ratio-runs" "$DATA/ratio-reports" "$DATA/ratio-floor"
  measure "$ri.$i" "$BIN" run "$LI/experiment.toml" --runs-dir "$DATA/ratio-runs" --reports-dir "$DATA/ratio-reports" --quiet --timings --no-plots
  measure "$pi.$i" "$DATA/venv/bin/python" benches/python_parse.py "$LI/reviews.jsonl"
  measure "$fl.$i" target/release/examples/parse_floor "$LI/reviews.jsonl" "$DATA/ratio-floor" "$DATA"/ratio-runs/*/
done
rm -rf "$DATA/ratio-floor"
cat "$ri".[123].stderr > "$ri.stderr"; cat "$pi".[123].stderr > "$pi.stderr"; cat "$fl".[123].stderr > "$fl.stderr"
printf '
turn-5 ratios (2 cores; fastest of three, the two sides alternating in this run)
'
printf '%-78s %9s %8s %s
' "" "seconds" "peak MiB" "ratio (goal)"
printf '%-78s %9s %8s
' "orjson parsing every line of reviews.jsonl ($SIZE MB, $RETURNS returns)" "$(wall_s "$pi")" "$(rss_mb "$pi")"
printf '%-78s %9s %8s %s
' "calibench run --no-plots, $FINDINGS findings, interleaved in windows of 200" "$(wall_s "$ri")" "$(rss_mb "$ri")" \
  "$(ratio "$(wall_s "$ri")" "$(wall_s "$pi")")x the parse (<= 1.0); memory $(ratio "$(rss_mb "$ri")" "$SIZE_MIB")x the file's $SIZE_MIB MiB (<= 1.0)"
printf '  its phases: read and parse %ss, replay and metrics %ss, tables %ss\n' "$(phase "$ri" "read and parse")" "$(phase "$ri" "replay and metrics")" "$(phase "$ri" tables)"
printf '%-78s %9s %8s %s\n' "  the floor: reading, SHA-256, a parse that builds nothing on 2 threads, the bytes" "$(wall_s "$fl")" "$(rss_mb "$fl")" \
  "$(ratio "$(wall_s "$fl")" "$(wall_s "$pi")")x the parse (the rest of the parse's time is what the run's own work may take)"
# The same goal in processor time: on $CORES cores, finishing within the parse's time allows at
# most $CORES times that time of processing, however well the run's threads share the cores.
printf '  processor time (user + system, least of three): the run %ss, the floor %ss; on %s cores the parse'"'"'s %ss allows %ss\n' \
  "$(cpu_s "$ri")" "$(cpu_s "$fl")" "$CORES" "$(wall_s "$pi")" "$(awk -v w="$(wall_s "$pi")" -v c="$CORES" 'BEGIN { printf "%.2f", w * c }')"

sw="$DATA/out-ratio-sweep"
measure3 "$sw" "$BIN" sweep "$LI/experiment.toml" --arm treatment --vary "review.actionable_from=0:99:1" --runs-dir "$DATA/ratio-runs" --reports-dir "$DATA/ratio-reports" --quiet --no-plots
printf '%-78s %9s %8s %s
' "calibench sweep of 100 actionable thresholds over the same findings" "$(wall_s "$sw")" "$(rss_mb "$sw")" \
  "$(ratio "$(wall_s "$sw")" "$(wall_s "$ri")")x one run (<= 5)"

# 3,000 queries collected by an agent that answers with its trace file: plainly, and in a seeded
# order ten at a time with the sequential decision looked at after each batch (both arms read the
# same traces, so it never decides and collects all 3,000).
NQ=3000; [ -n "$QUICK" ] && NQ=300
CQ="$DATA/collect-queries-$NQ"
if [ ! -d "$CQ/queries" ]; then
  mkdir -p "$CQ/queries"
  [ -f "$DATA/large-queries-$NQ/queries.jsonl" ] || cargo run --release --quiet --example generate_large_queries -- "$NQ" "$DATA/large-queries-$NQ"
  awk -v d="$CQ/queries" '{ f = sprintf("%s/q%06d.json", d, NR); print > f; close(f) }' "$DATA/large-queries-$NQ/queries.jsonl"
  printf '#!/bin/sh\ncat\n' > "$CQ/agent.sh"; chmod +x "$CQ/agent.sh"
  cat > "$CQ/experiment.toml" <<TOML
name = "collect-queries"
corpus = "."
seed = 1
bootstrap = 200
[arms.baseline]
source = "recorded"
[arms.baseline.confidence]
policy = "flat-mean"
[arms.treatment]
source = "recorded"
[arms.treatment.confidence]
policy = "flat-mean"
[decision]
unnecessary_recovery_rate = "decrease"
[sequential]
always = true
[collect]
kind = "queries"
command = ["./agent.sh"]
targets = "queries/*.json"
concurrency = 2
timeout_s = 30
retries = 0
TOML
fi
cp1="$DATA/out-ratio-collect"; cu1="$DATA/out-ratio-until"
for i in 1 2 3; do
  measure "$cp1.$i" sh -c 'rm -rf "$1" && exec "$2" collect "$3" --run-id plain --runs-dir "$1" --quiet' sh "$DATA/collect-runs" "$BIN" "$CQ"
  measure "$cu1.$i" sh -c 'rm -rf "$1" && exec "$2" collect "$3" --run-id until --runs-dir "$1" --quiet --until-decided --batch 10' sh "$DATA/collect-runs" "$BIN" "$CQ"
done
cat "$cp1".[123].stderr > "$cp1.stderr"; cat "$cu1".[123].stderr > "$cu1.stderr"
printf '%-78s %9s %8s
' "calibench collect of $NQ queries" "$(wall_s "$cp1")" "$(rss_mb "$cp1")"
printf '%-78s %9s %8s %s
' "calibench collect --until-decided --batch 10 of the same queries" "$(wall_s "$cu1")" "$(rss_mb "$cu1")" \
  "$(ratio "$(wall_s "$cu1")" "$(wall_s "$cp1")")x the plain collect (<= 1.5)"

# 1,000 shards of one plan of 4,000 calls (4,000 queries read by both arms under one label),
# each collected apart, then merged.
NS=1000; NT=4000; [ -n "$QUICK" ] && { NS=100; NT=400; }
SH="$DATA/shards-$NS"
if [ ! -f "$SH/done" ]; then
  rm -rf "$SH"; mkdir -p "$SH/plan/queries"
  [ -f "$DATA/large-queries-$NT/queries.jsonl" ] || cargo run --release --quiet --example generate_large_queries -- "$NT" "$DATA/large-queries-$NT"
  awk -v d="$SH/plan/queries" '{ f = sprintf("%s/q%06d.json", d, NR); print > f; close(f) }' "$DATA/large-queries-$NT/queries.jsonl"
  cp "$CQ/agent.sh" "$SH/plan/"
  sed -e '/^\[sequential\]/,/^always/d' "$CQ/experiment.toml" > "$SH/plan/experiment.toml"
  echo "== collecting $NS shards of $NT queries"
  for k in $(seq 1 "$NS"); do "$BIN" collect "$SH/plan" --shard "$k/$NS" --run-id "s$k" --runs-dir "$SH/runs" --quiet > /dev/null; done
  touch "$SH/done"
fi
mg="$DATA/out-ratio-merge"
measure3 "$mg" sh -c 'rm -rf "$1" && exec "$2" merge "$1" "$3"/runs/s*' sh "$DATA/merged-$NS" "$BIN" "$SH"
printf '%-78s %9s %8s %s
' "calibench merge of $NS shards ($NT lines)" "$(wall_s "$mg")" "$(rss_mb "$mg")" "(<= 2 s, <= 100 MB = 95 MiB)"
fi

if want alpha || want long; then
if ! "$DATA/venv/bin/python" -c "import numpy, pandas, krippendorff" 2>/dev/null; then
  echo "== creating $DATA/venv with numpy, pandas and krippendorff"
  python3 -m venv "$DATA/venv"
  "$DATA/venv/bin/pip" install --quiet numpy pandas krippendorff==0.9.0
fi
PY="$DATA/venv/bin/python"

gen() { # kind units name
  [ -f "$DATA/$3-long.csv" ] || { echo "== generating $3 ($RATERS raters x $2 units, 10% missing)"; "$PY" benches/gen_reliability.py "$1" "$RATERS" "$2" "$DATA/$3"; }
}
A=anchors-$UNITS; O=ordinal101-$UNITS; C=continuous-$UNITS; B=anchors-100000
gen anchors "$UNITS" "$A"
fi

if want long; then

# One layout against Python at both levels: $1 the layout's name, $2 its file, $3 the Python
# script, $4 how the Python side is measured (measure3, or measure for a single run).
alpha_vs_python() {
  printf '\n%-34s %10s %10s %10s %14s\n' "$1 CSV ($RATERS x $UNITS, $(( $(stat -c %s "$2") / 1000000 )) MB)" "calibench" "python" "ratio" "peak MiB"
  for level in interval nominal; do
    c="$DATA/out-c-$1-$level"; p="$DATA/out-p-$1-$level"
    measure3 "$c" "$BIN" alpha "$2" --level "$level" --bootstrap 0 --json
    "$4" "$p" "$PY" "$3" "$2" "$level"
    printf '%-34s %9ss %9ss %9sx %7s/%s\n' "anchors, $level, --bootstrap 0" "$(wall_s "$c")" "$(wall_s "$p")" \
      "$(awk -v a="$(wall_s "$p")" -v b="$(wall_s "$c")" 'BEGIN{printf "%.1f", a/b}')" "$(rss_mb "$c")" "$(rss_mb "$p")"
    echo "    alpha: calibench $(sed -n 's/.*"alpha": \([-0-9.e]*\).*/\1/p' "$c.stdout"), python $(sed -n 's/.*alpha=\([^ ]*\).*/\1/p' "$p.stdout")"
  done
}
# The layouts judge and annotation exports arrive in, first long `unit,rater,value`, one row per
# rating given. Both sides end to end from the same file: `calibench alpha FILE` against pandas
# read_csv + pivot + krippendorff.alpha (benches/python_long.py).
alpha_vs_python long "$DATA/$A-long.csv" benches/python_long.py measure3
# The other layout users have: wide `rater,<unit1>,...`, one row per rater, from the same
# matrix; pandas read_csv + krippendorff.alpha (benches/python_wide.py). pandas reads a million
# columns slowly (about 2.5 minutes here), so the Python side runs once.
alpha_vs_python wide "$DATA/$A.csv" benches/python_wide.py measure
# The default command (2,000 unit-bootstrap replicates) on the long files: the 5-value anchors
# (grouped into patterns), and the 101-level ordinal and continuous data (drawn unit by unit).
gen ordinal101 "$UNITS" "$O"
gen continuous "$UNITS" "$C"
printf '\n%-46s %10s %12s %10s %8s\n' "default 2,000 replicates, long CSV" "whole" "bootstrap" "x --bootstrap 0" "peak MiB"
for kind in "$A:interval" "$A:nominal" "$O:ordinal" "$C:interval"; do
  data=${kind%%:*}; level=${kind##*:}
  c="$DATA/out-c-long-boot-$data-$level"; c0="$DATA/out-c-long-noboot-$data-$level"
  measure3 "$c" "$BIN" alpha "$DATA/$data-long.csv" --level "$level" --json --timings
  measure3 "$c0" "$BIN" alpha "$DATA/$data-long.csv" --level "$level" --json --timings --bootstrap 0
  printf '%-46s %9ss %11ss %10sx %8s\n' "${data%-*}, $level" "$(wall_s "$c")" "$(phase "$c" bootstrap)" \
    "$(awk -v a="$(wall_s "$c")" -v b="$(wall_s "$c0")" 'BEGIN{printf "%.1f", a/b}')" "$(rss_mb "$c")"
done

fi

if want alpha; then
gen ordinal101 "$UNITS" "$O"
gen continuous "$UNITS" "$C"
gen anchors 100000 "$B"
printf '\n%-34s %10s %10s %10s %10s %9s\n' "case ($RATERS x $UNITS)" "calibench" "  (alpha)" "python" "ratio" "peak MiB"
for level in interval nominal; do
  c="$DATA/out-c-$level"; p="$DATA/out-p-$level"
  measure3 "$c" "$BIN" alpha "$DATA/$A.csv" --level "$level" --bootstrap 0 --timings --json
  measure "$p" "$PY" benches/python_alpha.py "$DATA/$A.npy" "$level"
  ca=$(phase "$c" estimate); pa=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$p.stdout")
  calpha=$(sed -n 's/.*"alpha": \([-0-9.e]*\).*/\1/p' "$c.stdout"); palpha=$(sed -n 's/.*alpha=\([^ ]*\).*/\1/p' "$p.stdout")
  printf '%-34s %9ss %9ss %9ss %9sx %5s/%s\n' "anchors {0..100 step 25}, $level" "$(wall_s "$c")" "$ca" "$pa" \
    "$(awk -v a="$pa" -v b="$ca" 'BEGIN{printf "%.0f", a/b}')" "$(rss_mb "$c")" "$(rss_mb "$p")"
  echo "    alpha: calibench $calpha, python $palpha"
done

for kind in "$O:ordinal" "$C:interval" "$C:ordinal"; do
  data=${kind%%:*}; level=${kind##*:}
  c="$DATA/out-c-$data-$level"; p="$DATA/out-p-$data-$level"
  measure3 "$c" "$BIN" alpha "$DATA/$data.csv" --level "$level" --bootstrap 0 --timings --json
  # The Python package builds a units x V x V array; cap it at 16 GB so it fails fast.
  measure "$p" bash -c "ulimit -v 16000000; timeout 300 '$PY' benches/python_alpha.py '$DATA/$data.npy' $level"
  printf '%-34s %9ss %9ss %10s %10s %5s/%s\n' "$data, $level" "$(wall_s "$c")" "$(phase "$c" estimate)" \
    "$(sed -n 's/.*alpha=\([^ ]*\).*/\1/p' "$p.stdout" | sed 's/^[-0-9.]*$/ran/')" "" "$(rss_mb "$c")" "$(rss_mb "$p")"
  echo "    alpha: calibench $(sed -n 's/.*"alpha": \([-0-9.e]*\).*/\1/p' "$c.stdout"), python $(cat "$p.stdout" | tr -d '\n')"
done

b="$DATA/out-boot"
measure3 "$b" "$BIN" alpha "$DATA/$B.csv" --level interval --bootstrap 2000 --timings --json
printf '\n2,000 unit-bootstrap replicates, %s x 100,000 units, interval: %ss (whole command %ss, %s MiB)\n' \
  "$RATERS" "$(phase "$b" bootstrap)" "$(wall_s "$b")" "$(rss_mb "$b")"
b="$DATA/out-boot-ordinal"
measure3 "$b" "$BIN" alpha "$DATA/$B.csv" --level ordinal --bootstrap 2000 --timings --json
printf '2,000 unit-bootstrap replicates, %s x 100,000 units, ordinal:  %ss (whole command %ss, %s MiB)\n' \
  "$RATERS" "$(phase "$b" bootstrap)" "$(wall_s "$b")" "$(rss_mb "$b")"
fi

if want replay; then
FINDINGS=1000000
[ -n "$QUICK" ] && FINDINGS=100000
# Three runs of `run --no-plots` (the issue's figure) on the generated corpus in folder $1
# (made with the generator's extra argument $3 when it is missing), their outputs under $2.
replay_runs() {
  [ -f "$1/reviews.jsonl" ] || cargo run --release --quiet --example generate_large_reviews -- "$FINDINGS" "$1" ${3:+"$3"}
  for i in 1 2 3; do
    rm -rf "$DATA/replay-runs" "$DATA/replay-reports"
    measure "$2.$i" "$BIN" run "$1/experiment.toml" --runs-dir "$DATA/replay-runs" --reports-dir "$DATA/replay-reports" --quiet --timings --no-plots
  done
  cat "$2".[123].stderr > "$2.stderr"
}
L="$DATA/large-reviews-$FINDINGS"
r="$DATA/out-replay"
replay_runs "$L" "$r"
printf '\nreplay of %s findings (%s MB of reviews.jsonl, both arms, no bootstrap):\n' "$FINDINGS" "$(( $(stat -c %s "$L/reviews.jsonl") / 1000000 ))"
printf '  read and parse %ss, replay and metrics %ss, tables %ss, report and plots %ss; whole command %ss, %s MiB\n' \
  "$(phase "$r" "read and parse")" "$(phase "$r" "replay and metrics")" "$(phase "$r" tables)" "$(phase "$r" report)" "$(wall_s "$r")" "$(rss_mb "$r")"
printf '  slowest of the three runs %ss; bars: 2 s and 400 MB\n' \
  "$(awk '/Elapsed \(wall clock\)/ {n=split($NF,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; printf "%.2f\n", s}' "$r.stderr" | sort -g | tail -1)"

# The same corpus with titles and sections as long as a reviewer writes them (~90 and ~40
# characters): more text to read, hash, normalize and write.
LL="$DATA/large-reviews-long-$FINDINGS"
rl="$DATA/out-replay-long"
replay_runs "$LL" "$rl" long
printf '  with long titles and sections (%s MB of reviews.jsonl): read and parse %ss, replay and metrics %ss, tables %ss; whole command %ss, %s MiB\n' \
  "$(( $(stat -c %s "$LL/reviews.jsonl") / 1000000 ))" "$(phase "$rl" "read and parse")" "$(phase "$rl" "replay and metrics")" "$(phase "$rl" tables)" "$(wall_s "$rl")" "$(rss_mb "$rl")"

fi

if want queries; then
QUERIES=100000
[ -n "$QUICK" ] && QUERIES=10000
Q="$DATA/large-queries-$QUERIES"
[ -f "$Q/queries.jsonl" ] || cargo run --release --quiet --example generate_large_queries -- "$QUERIES" "$Q"
q="$DATA/out-queries"; rm -rf "$DATA/query-runs" "$DATA/query-reports"
measure3 "$q" "$BIN" run "$Q/experiment.toml" --runs-dir "$DATA/query-runs" --reports-dir "$DATA/query-reports" --quiet --timings
printf '\nquery replay of %s queries (%s MB of queries.jsonl, both models, 2,000 bootstrap replicates):\n' "$QUERIES" "$(( $(stat -c %s "$Q/queries.jsonl") / 1000000 ))"
printf '  read and parse %ss, replay and metrics %ss, tables %ss, report and plots %ss; whole command %ss, %s MiB\n' \
  "$(phase "$q" "read and parse")" "$(phase "$q" "replay and metrics")" "$(phase "$q" tables)" "$(phase "$q" report)" "$(wall_s "$q")" "$(rss_mb "$q")"
q0="$DATA/out-queries-noboot"; rm -rf "$DATA/query-runs" "$DATA/query-reports"
measure3 "$q0" "$BIN" run "$Q/experiment.toml" --runs-dir "$DATA/query-runs" --reports-dir "$DATA/query-reports" --quiet --timings --bootstrap 0
printf '  without the bootstrap: replay and metrics %ss; whole command %ss\n' "$(phase "$q0" "replay and metrics")" "$(wall_s "$q0")"
fi

if want wide; then
TOOLS=100000
[ -n "$QUICK" ] && TOOLS=10000
W="$DATA/wide-query-$TOOLS"
[ -f "$W/queries.jsonl" ] || cargo run --release --quiet --example generate_wide_query -- "$TOOLS" "$W"
w="$DATA/out-wide"; rm -rf "$DATA/wide-runs" "$DATA/wide-reports"
measure3 "$w" "$BIN" run "$W/experiment.toml" --runs-dir "$DATA/wide-runs" --reports-dir "$DATA/wide-reports" --quiet --timings --no-plots
printf '\none query of %s tool calls (%s MB of queries.jsonl, both models):\n' "$TOOLS" "$(( $(stat -c %s "$W/queries.jsonl") / 1000000 ))"
printf '  read and parse %ss, replay and metrics %ss; whole command %ss, %s MiB\n' \
  "$(phase "$w" "read and parse")" "$(phase "$w" "replay and metrics")" "$(wall_s "$w")" "$(rss_mb "$w")"
fi

if want import; then
# Inspect .eval logs of N samples (benches/gen_eval.py: the real popularity log's sample, about
# 8 KB, copied N times). calibench import against what a team would write instead with
# inspect_ai: read_eval_log (the whole log) or read_eval_log_samples (a generator), each turned
# into (id, epoch, scorer, value) rows (benches/python_inspect.py). A slimmed copy of the largest
# log (samples cut to id, epoch and scores) shows what memory follows: the count, not the size.
if ! "$DATA/venv/bin/python" -c "import inspect_ai" 2>/dev/null; then
  [ -x "$DATA/venv/bin/python" ] || python3 -m venv "$DATA/venv"
  echo "== installing inspect_ai into $DATA/venv"
  "$DATA/venv/bin/pip" install --quiet inspect_ai
fi
PY="$DATA/venv/bin/python"
SIZES="2000 20000 200000"
[ -n "$QUICK" ] && SIZES="2000"
printf '
%-40s %16s %22s %22s
' "calibench import inspect, .eval" "calibench" "read_eval_log" "read_eval_log_samples"
for n in $SIZES; do
  E="$DATA/eval-$n.eval"
  [ -f "$E" ] || { echo "== generating $E"; python3 benches/gen_eval.py "$n" "$E"; }
  c="$DATA/out-import-$n"
  # Each run into an empty folder (a folder that already holds lines is read back first).
  measure3 "$c" sh -c 'rm -rf "$1" && exec "$2" import inspect "$3" --arm a --into "$1" --quiet' sh "$DATA/import-$n" "$BIN" "$E"
  # inspect_ai's readers, once each: read_eval_log needs about 1 GB at 20,000 samples, so it is
  # not run past that; read_eval_log_samples took 24 s at 2,000 and had not finished after 16
  # minutes at 20,000, so it is run at 2,000 only.
  py="not run"; pys="not run"
  if [ "$n" -le 20000 ]; then
    p="$DATA/out-import-py-$n"
    measure "$p" "$PY" benches/python_inspect.py log "$E"
    py="$(wall_s "$p")s, $(rss_mb "$p") MiB"
  fi
  if [ "$n" -le 2000 ]; then
    q="$DATA/out-import-pys-$n"
    measure "$q" "$PY" benches/python_inspect.py samples "$E"
    pys="$(wall_s "$q")s, $(rss_mb "$q") MiB"
  fi
  printf '%-40s %16s %22s %22s
' "$n samples ($(( $(stat -c %s "$E") / 1000000 )) MB)" "$(wall_s "$c")s, $(rss_mb "$c") MiB" "$py" "$pys"
done
n=${SIZES##* }; E="$DATA/eval-$n.eval"; S="$DATA/eval-$n-slim.eval"
[ -f "$S" ] || python3 benches/gen_eval.py "$n" "$S" --slim
c="$DATA/out-import-slim"
measure3 "$c" sh -c 'rm -rf "$1" && exec "$2" import inspect "$3" --arm a --into "$1" --quiet' sh "$DATA/import-slim" "$BIN" "$S"
printf '%-40s %16s
' "$n samples, slimmed ($(( $(stat -c %s "$S") / 1000000 )) MB)" "$(wall_s "$c")s, $(rss_mb "$c") MiB"
fi

if want hostile; then
# Inputs built to exhaust memory (issue 34): peak memory must not follow what they inflate to
# or how many problems they hold. Each is refused (exit 2) or imported; the figure is the whole
# command's peak. An Inspect .eval whose one sample holds an unmapped array of zeros that
# inflates to 100 MB (102 KB on disk) and to 1 GiB (1 MB); a reviews.jsonl of ten million `{}`
# lines; one of ten million `{}` findings on one line; and one of a thousand returns of 10,000
# `{}` findings each (the most one return may hold).
H="$DATA/hostile"; mkdir -p "$H"
bomb() { # out MiB
  [ -f "$1" ] || python3 - "$1" "$2" <<'PY'
import json, sys, zipfile
out, mib = sys.argv[1], int(sys.argv[2])
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}}))
    with z.open("samples/1_epoch_1.json", "w", force_zip64=True) as f:
        f.write(b'{"id": 1, "epoch": 1, "scores": {"m": {"value": 1}}, "x": [')
        chunk = b"0," * (1 << 19)
        for _ in range(mib):
            f.write(chunk)
        f.write(b"0]}")
PY
}
bomb "$H/bomb-100m.eval" 100
bomb "$H/bomb-1g.eval" 1023
corpus() { # name python-to-append
  [ -f "$H/$1/reviews.jsonl.done" ] && return
  rm -rf "$H/$1"; cp -r corpora/code-review-ab "$H/$1"
  python3 -c "$2" "$H/$1/reviews.jsonl"; touch "$H/$1/reviews.jsonl.done"
}
corpus lines "import sys; open(sys.argv[1],'a').write('{}\n'*10_000_000)"
corpus one-line "import sys; open(sys.argv[1],'a').write('{\"target\":\"j\",\"arm\":\"baseline\",\"reviewer\":\"r\",\"findings\":['+','.join(['{}']*10_000_000)+']}\n')"
corpus returns "import sys
f=open(sys.argv[1],'a'); body=','.join(['{}']*10000)
for i in range(1000): f.write('{\"target\":\"j%d\",\"arm\":\"baseline\",\"reviewer\":\"r\",\"findings\":[%s]}\n' % (i, body))"
printf '\n%-64s %8s %8s %10s\n' "hostile input (issue 34)" "exit" "seconds" "peak MiB"
hostile() { # label outfile cmd...
  local label=$1 out=$2; shift 2
  measure "$out" "$@"
  printf '%-64s %8s %8s %10s\n' "$label" "$(sed -n 's/.*Exit status: //p' "$out.stderr")" "$(wall_s "$out")" "$(rss_mb "$out")"
}
for b in 100m 1g; do
  hostile "import inspect, .eval of a sample inflating to $b ($(( $(stat -c %s "$H/bomb-$b.eval") / 1000 )) KB)" "$H/out-bomb-$b" \
    sh -c 'rm -rf "$1" && exec "$2" import inspect "$3" --arm a --into "$1" --quiet' sh "$H/import-$b" "$BIN" "$H/bomb-$b.eval"
done
for c in lines one-line returns; do
  mb=$(( $(stat -c %s "$H/$c/reviews.jsonl") / 1000000 ))
  hostile "validate, reviews.jsonl $c ($mb MB)" "$H/out-validate-$c" "$BIN" validate "$H/$c/experiment.toml" --quiet
  hostile "run, reviews.jsonl $c ($mb MB)" "$H/out-run-$c" sh -c 'rm -rf "$1" && exec "$2" run "$3" --runs-dir "$1/runs" --reports-dir "$1/reports" --no-plots --quiet' sh "$H/run-$c" "$BIN" "$H/$c/experiment.toml"
done
fi

if want install; then
# A CI job's cost of getting calibench. The archive is what the release workflow ships: the
# `dist` profile, packed by scripts/package-release.sh, installed by scripts/install.sh.
I="$DATA/install"; rm -rf "$I"; mkdir -p "$I"
measure "$I/out-dist" cargo build --locked --profile dist --quiet
scripts/package-release.sh "$I/dist" target/dist/calibench 2>/dev/null
ARCHIVE=$(ls "$I"/dist/*.tar.gz)
mkdir -p "$I/site/latest/download"; cp "$I"/dist/* "$I/site/latest/download/"
measure3 "$I/out-install" sh -c 'rm -rf "$1" && CALIBENCH_RELEASE_BASE="file://$2" CALIBENCH_INSTALL_DIR="$1" exec scripts/install.sh' sh "$I/bin" "$PWD/$I/site"
measure3 "$I/out-gate" sh -c 'rm -rf "$1" && exec "$2" gate corpora/capacity-50 --runs-dir "$1/runs" --reports-dir "$1/reports" --quiet' sh "$I/gate" "$I/bin/calibench"
# What a job without the archives runs: a clean build, as on a cache miss.
measure "$I/out-build" env CARGO_TARGET_DIR="$I/target" cargo install --locked --path . --root "$I/root" --quiet
printf '\n%-58s %10s %10s\n' "getting calibench in CI" "seconds" "peak MiB"
printf '%-58s %10s %10s\n' "scripts/install.sh, release archive ($(( $(stat -c %s "$ARCHIVE") / 1000000 )) MB, file://)" "$(wall_s "$I/out-install")" "$(rss_mb "$I/out-install")"
printf '%-58s %10s %10s\n' "cargo install --locked --path . (clean target directory)" "$(wall_s "$I/out-build")" "$(rss_mb "$I/out-build")"
printf '%-58s %10s %10s\n' "calibench gate corpora/capacity-50 (installed binary)" "$(wall_s "$I/out-gate")" "$(rss_mb "$I/out-gate")"
printf '%-58s %10s\n' "(cargo build --profile dist, the archive's build)" "$(wall_s "$I/out-dist")"
echo "binary: release $(( $(stat -c %s target/release/calibench) / 1000000 )) MB, dist $(( $(stat -c %s target/dist/calibench) / 1000000 )) MB"
rm -rf "$I/target"
fi

if want alpha || want long; then
echo
echo "calibench column: whole command (parse CSV + alpha); (alpha): the alpha computation alone;"
echo "python: the krippendorff.alpha call alone on the preloaded array; ratio = python / (alpha)."
echo "Times are the fastest of three runs on each side."
echo "peak MiB: calibench / python process maximum resident set size. Machine: $(nproc) cores."
fi

if want sweep; then
QUERIES=100000; FINDINGS=1000000
[ -n "$QUICK" ] && { QUERIES=10000; FINDINGS=100000; }
Q="$DATA/large-queries-$QUERIES"
[ -f "$Q/queries.jsonl" ] || cargo run --release --quiet --example generate_large_queries -- "$QUERIES" "$Q"
L="$DATA/large-reviews-$FINDINGS"
[ -f "$L/reviews.jsonl" ] || cargo run --release --quiet --example generate_large_reviews -- "$FINDINGS" "$L"
# 100 recovery gates from the stop threshold (0.2) up.
GATES="confidence.recovery_threshold=$(seq -s, -f %.3f 0.200 0.008 0.992)"
s1="$DATA/out-sweep-one-run"; rm -rf "$DATA/sweep-runs" "$DATA/sweep-reports"
measure3 "$s1" "$BIN" run "$Q/experiment.toml" --runs-dir "$DATA/sweep-runs" --reports-dir "$DATA/sweep-reports" --quiet --bootstrap 2000
s2="$DATA/out-sweep-queries"
measure3 "$s2" "$BIN" sweep "$Q/experiment.toml" --arm treatment --vary "$GATES" --runs-dir "$DATA/sweep-runs" --reports-dir "$DATA/sweep-reports" --quiet --bootstrap 2000
# What a team would do instead: one run per grid point (10 timed; the other 90 cost the same).
s3="$DATA/out-sweep-by-runs"
start=$(date +%s.%N)
for g in $(seq -f %.2f 0.20 0.08 0.92); do
  "$BIN" run "$Q/experiment.toml" --runs-dir "$DATA/sweep-runs" --reports-dir "$DATA/sweep-reports" --quiet --bootstrap 2000 \
    --set "arms.treatment.confidence.recovery_threshold=$g" > /dev/null
done
ten=$(echo "$(date +%s.%N) - $start" | bc)
printf '\nsweep of 100 recovery gates over %s queries (2,000 bootstrap replicates):\n' "$QUERIES"
printf '  calibench sweep %ss, %s MiB; one calibench run %ss (sweep / run = %s; bar: 5)\n' \
  "$(wall_s "$s2")" "$(rss_mb "$s2")" "$(wall_s "$s1")" "$(echo "scale=1; $(wall_s "$s2") / $(wall_s "$s1")" | bc)"
printf '  instead, calibench run --set per point: 10 points %.2fs, so about %.0fs for the 100\n' "$ten" "$(echo "$ten * 10" | bc)"
s4="$DATA/out-sweep-reviews"
measure3 "$s4" "$BIN" sweep "$L/experiment.toml" --arm treatment --vary "review.actionable_from=0:99:1" --runs-dir "$DATA/sweep-runs" --reports-dir "$DATA/sweep-reports" --quiet --no-plots
printf 'sweep of 100 actionable thresholds over %s findings (no bootstrap, as the corpus sets): %ss, %s MiB (bars: 60 s, 1,000 MB)\n' \
  "$FINDINGS" "$(wall_s "$s4")" "$(rss_mb "$s4")"
fi

if want labels; then
# Human labels at crowd scale (hostile round 3, 13): memory and time must follow the label lines,
# never units × annotators. 333,334 annotators × 3 labels over 200 findings (1,000,002 lines,
# both dimensions) replayed and validated; and the alt-test of a model against 100,000
# annotators who each labelled 3 of 2,000 units (a long CSV). Bars: 500 MB and 10 s.
N=333334; C=100000
[ -n "$QUICK" ] && { N=33334; C=10000; }
LB="$DATA/labels-$N"; LC="$DATA/crowd-$C"
[ -f "$LB/labels.jsonl" ] || python3 benches/gen_labels.py "$LB" "$N" 200 3
[ -f "$LC.csv" ] || python3 benches/gen_labels.py "$LC" "$C" 2000 3
l1="$DATA/out-labels-run"; l2="$DATA/out-labels-validate"; l3="$DATA/out-labels-alttest"
measure3 "$l1" sh -c 'rm -rf "$1" && exec "$2" run "$3" --runs-dir "$1/runs" --reports-dir "$1/reports" --no-plots --quiet' sh "$DATA/labels-out" "$BIN" "$LB"
measure3 "$l2" "$BIN" validate "$LB" --quiet
measure3 "$l3" "$BIN" alttest "$LC.csv" --llm model-x --level interval --min-items-per-human 3 --quiet
printf '\n%-72s %8s %10s\n' "human labels at crowd scale (bars: 10 s, 500 MB)" "seconds" "peak MiB"
printf '%-72s %8s %10s\n' "calibench run, $(wc -l < "$LB/labels.jsonl") label lines" "$(wall_s "$l1")" "$(rss_mb "$l1")"
printf '%-72s %8s %10s\n' "calibench validate, the same corpus" "$(wall_s "$l2")" "$(rss_mb "$l2")"
printf '%-72s %8s %10s\n' "calibench alttest, $C annotators x 3 of 2,000 units" "$(wall_s "$l3")" "$(rss_mb "$l3")"
fi

if want sequential; then
# Units to a sequential decision against plan's fixed sizes (docs/guides/stop-when-you-know.md).
printf '\nsequential decisions: median units to a decision, 1,000 seeded streams per row\n'
cargo run --release --quiet --example sequential_savings
QUERIES=100000
[ -n "$QUICK" ] && QUERIES=10000
Q="$DATA/large-queries-$QUERIES"
[ -f "$Q/queries.jsonl" ] || cargo run --release --quiet --example generate_large_queries -- "$QUERIES" "$Q"
# The same experiment without its whole-set guard (ECE has no per-query stream to bound).
QS="$DATA/large-queries-seq-$QUERIES"; mkdir -p "$QS"
sed -e '/^ece = /d' -e "s|^corpus = \".\"|corpus = \"../large-queries-$QUERIES\"|" "$Q/experiment.toml" > "$QS/experiment.toml"
s0="$DATA/out-seq-run"; s1="$DATA/out-seq-sequential"
measure3 "$s0" sh -c 'rm -rf "$1" && exec "$2" run "$3" --runs-dir "$1/runs" --reports-dir "$1/reports" --quiet' sh "$DATA/seq-out" "$BIN" "$QS"
measure3 "$s1" sh -c 'rm -rf "$1" && exec "$2" run "$3" --runs-dir "$1/runs" --reports-dir "$1/reports" --quiet --sequential' sh "$DATA/seq-out" "$BIN" "$QS"
printf '\nrun --sequential on %s queries (2,000 bootstrap replicates): %ss, %s MiB; the same run without it %ss (ratio %s; bar: 2)\n' \
  "$QUERIES" "$(wall_s "$s1")" "$(rss_mb "$s1")" "$(wall_s "$s0")" "$(echo "scale=2; $(wall_s "$s1") / $(wall_s "$s0")" | bc)"
fi

if want collect; then
# A reviewer that answers at once (reads the document, prints an empty return): what is left of
# a call is calibench's own work (spawning, piping, checking, recording). The same calls made
# by a shell loop are what the reviewer costs by itself.
CB="$DATA/collect-bench"; rm -rf "$CB"; mkdir -p "$CB/documents" "$CB/reviewers"
for i in $(seq 1 100); do printf '# Plan %s\n\nSome text.\n' "$i" > "$CB/documents/plan-$i.md"; done
printf '#!/bin/sh\ncat > /dev/null\necho "{\\"findings\\": []}"\n' > "$CB/reviewers/r.sh"; chmod +x "$CB/reviewers/r.sh"
cat > "$CB/experiment.toml" <<'TOML'
name = "collect-bench"
mode = "doc"
[arms.baseline]
source = "float"
[arms.baseline.review]
policy = "float-gates"
[arms.treatment]
source = "anchored"
[arms.treatment.review]
policy = "anchored"
[collect]
command = ["./reviewers/r.sh", "{reviewer}", "{target}", "{arm}", "{run}"]
reviewers = ["a", "b"]
targets = "documents/*.md"
runs = 1
concurrency = 1
retries = 0
TOML
CALLS=400
c="$DATA/out-collect"; l="$DATA/out-collect-loop"
measure3 "$c" sh -c 'rm -rf "$1/runs" "$1/reviews.jsonl" "$1/collect.json" "$1/artifacts" && exec "$2" collect "$1" --runs-dir "$1/runs" --quiet' sh "$CB" "$BIN"
measure3 "$l" sh -c 'cd "$1" && for a in float anchored; do for r in a b; do for d in documents/*.md; do ./reviewers/r.sh "$r" "$d" "$a" 0 < "$d" > /dev/null; done; done; done' sh "$CB"
printf '\ncollect, %s calls of a reviewer that answers at once (concurrency 1): %ss, %s MiB; the same calls from a shell loop %ss\n' \
  "$CALLS" "$(wall_s "$c")" "$(rss_mb "$c")" "$(wall_s "$l")"
printf '  calibench per call %s ms, of which its own overhead %s ms (bar: 5 ms)\n' \
  "$(echo "scale=2; 1000 * $(wall_s "$c") / $CALLS" | bc)" "$(echo "scale=2; 1000 * ($(wall_s "$c") - $(wall_s "$l")) / $CALLS" | bc)"
fi

# Instructions executed by `run` on the 100,000-finding corpus (callgrind): the same count for
# the same build whatever else the machine runs, for comparing two builds where wall time on a
# shared 2-core machine cannot tell 10% apart. The manifest's SHA-256 is counted apart: under
# valgrind it runs without the CPU's SHA instructions, so it weighs far more than natively.
if want instructions; then
command -v valgrind > /dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
IL="$DATA/large-reviews-100000"
[ -f "$IL/reviews.jsonl" ] || cargo run --release --quiet --example generate_large_reviews -- 100000 "$IL"
ci="$DATA/out-instructions"
rm -rf "$ci.runs" "$ci.reports"
valgrind --tool=callgrind --callgrind-out-file="$ci.callgrind" "$BIN" run "$IL/experiment.toml" \
  --no-plots --runs-dir "$ci.runs" --reports-dir "$ci.reports" --quiet 2> "$ci.stderr"
# The first count on a line matching $1 (the whole listing is read: an early exit would break
# the pipe under pipefail).
count() { callgrind_annotate --inclusive=yes "$ci.callgrind" 2>/dev/null | awk -v pat="$1" '!n && $0 ~ pat {gsub(",", "", $1); print $1; n=1}'; }
total=$(count "PROGRAM TOTALS"); sha=$(count "sha2::sha256::compress256 ")
printf '\ninstructions of run on 100,000 findings (callgrind): %s million, of which SHA-256 of the inputs %s million; the run itself %s million\n' \
  "$((total / 1000000))" "$((${sha:-0} / 1000000))" "$(((total - ${sha:-0}) / 1000000))"
for part in "reading and checking|corpus::reviews::read_block_for " "of which the general reader|corpus::raw::fast_line " \
    "keeping the returns|calibench::corpus::unique " "both arms' replay|replay::arm::replay_arm_each \\[" \
    "CSV text|report::csv::Csv<W>::frame" "Parquet|report::parquet::Parquet<W>::frame"; do
  n=$(count "${part#*|}")
  printf '  %-27s %s million\n' "${part%%|*}" "$(( ${n:-0} / 1000000 ))"
done
fi

# `threads`: where the million-finding run's processor time goes, by phase (`--timings`) and by
# thread (each named for its part: src/threads.rs), sampled by `perf` at 999 Hz; the fastest of
# three runs. Samples are stamped with the monotonic clock each `--timings` lap reports, so a
# sample's phase is exact. What docs/benchmarks.md sets against the ratios' goal.
if want threads; then
command -v perf > /dev/null || { apt-get update -qq && apt-get install -y -qq linux-perf; }
# A container may forbid sampling (kernel.perf_event_paranoid, a seccomp profile): the section
# says so and the others go on.
if ! perf record -q -o "$DATA/out-threads.probe" true 2> "$DATA/out-threads.probe.err"; then
  printf '\nthreads: skipped, perf cannot sample here (kernel.perf_event_paranoid = %s): %s\n' \
    "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)" "$(head -1 "$DATA/out-threads.probe.err")"
else
TF=1000000
[ -n "$QUICK" ] && TF=100000
TL="$DATA/large-reviews-interleaved-$TF"
[ -f "$TL/reviews.jsonl" ] || cargo run --release --quiet --example generate_large_reviews -- "$TF" "$TL" long interleaved
th="$DATA/out-threads"
for i in 1 2 3; do
  rm -rf "$th.runs" "$th.reports"
  perf record -q -F 999 -k mono -o "$th.$i.perf" "$BIN" run "$TL/experiment.toml" --no-plots --quiet --timings \
    --runs-dir "$th.runs" --reports-dir "$th.reports" 2> "$th.$i.timings" > /dev/null
done
rm -rf "$th.runs" "$th.reports"
best=$(for i in 1 2 3; do echo "$(sed -n 's/^timing report: .*total \([0-9.]*\) s.*/\1/p' "$th.$i.timings") $i"; done | sort -g | head -1 | cut -d' ' -f2)
perf script -i "$th.$best.perf" -F comm,time 2> /dev/null > "$th.samples"
printf '\nprocessor time of run --no-plots on %s findings, by phase and thread (perf at 999 Hz, fastest of three)\n' "$TF"
python3 - "$th.$best.timings" "$th.samples" <<'PY'
import collections, re, sys
# Each lap: its phase, and the monotonic clock at its start (the previous lap's end; the first
# lap's end less its length) and at its end.
found = re.findall(r"^timing ([a-z ]+): ([0-9.]+) s \(.*, at ([0-9.]+) s monotonic\)",
                   open(sys.argv[1]).read(), re.M)
ends = [float(at) for _, _, at in found]
starts = [ends[0] - float(found[0][1])] + ends[:-1]
laps = [(p, start, end) for (p, _, _), start, end in zip(found, starts, ends)]
samples = []
for line in open(sys.argv[2]):
    # "comm  time:" with a comm that may hold spaces ("free rows").
    m = re.match(r"\s*(.*?)\s+([0-9]+\.[0-9]+):", line)
    if m:
        samples.append((m.group(1), float(m.group(2))))
by = collections.defaultdict(collections.Counter)
for name, t in samples:
    # Before the first lap: starting up, reading the experiment; after the last: the exit (its
    # memory given back).
    before = "start" if t <= laps[0][1] else "exit"
    phase = next((p for p, start, end in laps if start < t <= end), before)
    by[phase]["main" if name == "calibench" else name] += 1
for phase in ["start"] + [p for p, _, _ in laps] + ["exit"]:
    c = by[phase]
    if sum(c.values()) < 10:
        continue
    parts = ", ".join(f"{n} {k / 999:.2f}" for n, k in c.most_common())
    print(f"  {phase:20s} {sum(c.values()) / 999:5.2f} s: {parts}")
PY
fi
fi
