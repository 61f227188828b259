#!/bin/sh
# A stand-in for an LLM validator, for `calibench collect`'s validators stage
# (docs/guides/live-collection.md): the independent second look the validation pass asks for
# (docs/guides/ab-rubric-change.md): is the finding real, introduced by this change, and not
# handled elsewhere?
#
#   validate.sh FINDING_ID   < finding.json
#
# It reads the merged finding on stdin (one JSON object: title, severity, file, line, …,
# finding_id, arm, target, run, target_path) and prints the contract's verdict on stdout:
#   {"validated": true|false, "reason": "one sentence", "reasoning": "..."}
# (`reasoning` is ignored by calibench, as any key beside validated and reason is).
#
# What it believes: an unwrap on a key just read from the same map cannot fail (the cache
# change's finding is a false positive), a needless clone is usually needed after all, a TODO is
# not a defect the change introduced; everything else it checks holds. Three calls misbehave on
# purpose:
#   - on `pr-304-upload-handler`'s unwrap the first attempt is rate limited (exit 75) and the
#     retry answers;
#   - on `pr-301-retry-budget`'s unwrap in run 1 it hangs on every attempt, and is killed at
#     the stage's timeout and recorded as a failed call (the finding is then not externalized,
#     as the validation pass's rules say);
#   - on `pr-304-upload-handler`'s path finding in run 1 it answers in prose, a failed call too.
# Deterministic; POSIX sh and awk only.

set -eu
attempt=${CALIBENCH_ATTEMPT:-1}
input=$(cat)

field() {
  printf '%s' "$input" | awk -v key="$1" '{
    if (match($0, "\"" key "\":\"[^\"]*\"")) print substr($0, RSTART + length(key) + 4, RLENGTH - length(key) - 5)
  }'
}
title=$(field title)
target=$(field target)
file=$(field file)
run=$(printf '%s' "$input" | awk '{ if (match($0, /"run":[0-9]+/)) print substr($0, RSTART + 6, RLENGTH - 6) }')

case "$target|$title|$run" in
  "pr-304-upload-handler|Unchecked unwrap can panic|"*)
    if [ "$attempt" = 1 ]; then
      echo "429 Too Many Requests" >&2
      exit 75
    fi ;;
  "pr-301-retry-budget|Unchecked unwrap can panic|1")
    sleep 30 ;;
  "pr-304-upload-handler|File name from a request reaches a path unchecked|1")
    echo "I looked at the change and I think the finding is probably valid."
    exit 0 ;;
esac

case "$file|$title" in
  "src/cache/lru.rs|Unchecked unwrap can panic")
    echo '{"validated": false, "reason": "The key was just read from the same map, so remove cannot return None.", "reasoning": "traced where the keys come from"}'
    exit 0 ;;
esac

case "$title" in
  "Needless clone")
    echo '{"validated": false, "reason": "The value is moved into the audit record afterwards, so the clone is needed.", "reasoning": "checked the uses after the clone"}' ;;
  "TODO left in new code")
    echo '{"validated": false, "reason": "A TODO is a note, not a defect this change introduces.", "reasoning": "policy: TODOs are tracked elsewhere"}' ;;
  *)
    echo '{"validated": true, "reason": "The problem is on a line this change adds and nothing else handles it.", "reasoning": "read the hunk"}' ;;
esac
