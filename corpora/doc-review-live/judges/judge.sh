#!/bin/sh
# A stand-in for an LLM judge, for `calibench collect`'s judges stage
# (docs/guides/live-collection.md).
#
#   judge.sh JUDGE ITEM_ID   < item.json
#
# It reads the item on stdin (one JSON object: a merged finding, or a whole target with its
# `findings`) and prints the contract's verdict on stdout:
#   {"per_dimension": {"real": 0.xx, "important": 0.xx}, "rationale": "..."}
# The rationale is ignored by calibench, as any key beside per_dimension is.
#
# What it believes: a finding is as real as its kind of problem usually is (an open decision is
# nearly always real, an "absolute claim" often a nit), a little more when two reviewers
# found it; it matters as much as its severity says. A whole target (a review as presented)
# scores the mean of its findings weighted by their confidence: a review sure of its real
# findings and unsure of its nits scores higher than one sure of everything.
# Each judge has an honest bias, and a small jitter of its own per item:
#   - lenient: everything a bit better (+0.12);
#   - strict: everything a bit worse (-0.12);
#   - flaky: no bias, but one item in seven it fails: it exits 1 ("judge service unavailable"),
#     or, one item in eleven, answers in prose instead of JSON. calibench records either as a
#     failed judge (per_dimension null, with the reason), never as a zero.
# Deterministic (the same judge and item always give the same verdict); POSIX sh and awk only.

set -eu
judge=$1 item=$2

awk -v judge="$judge" -v item="$item" '
function hash(s,    i, h) {
  h = 7
  for (i = 1; i <= length(s); i++) h = (h * 31 + ord[substr(s, i, 1)]) % 1000003
  return h
}
function clamp(x) { return x < 0 ? 0 : (x > 1 ? 1 : x) }
# How real a finding of this title usually is.
function real_of(title,    t) {
  t = tolower(title)
  if (t ~ /open decision|unsized|not sized|rollback|unchecked|panic|leak|race|overflow|injection/) return 0.88
  if (t ~ /timeline|migration|retry|timeout|error is ignored|swallow/) return 0.72
  if (t ~ /question|metric|test|missing/) return 0.60
  if (t ~ /absolute claim|naming|style|comment|typo/) return 0.35
  return 0.55
}
function important_of(severity) {
  if (severity == "P0") return 0.95
  if (severity == "P1") return 0.78
  if (severity == "P2") return 0.52
  return 0.30
}
BEGIN { for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i }
{ text = text $0 }
END {
  h = hash(item)
  if (judge == "flaky" && h % 7 == 0) {
    print "judge service unavailable (503)" > "/dev/stderr"
    exit 1
  }
  if (judge == "flaky" && h % 11 == 0) {
    print "This finding seems real and fairly important to me."
    exit 0
  }
  bias = judge == "lenient" ? 0.12 : (judge == "strict" ? -0.12 : 0)
  jitter = (hash(judge "|" item) % 11 - 5) / 100
  # Every finding in the item: its title, severity and number of reviewers.
  n = 0; rest = text
  while (match(rest, /"reviewers":\[[^]]*\]/)) {
    n++
    rv = substr(rest, RSTART, RLENGTH)
    R[n] = gsub(/","/, "", rv) + 1
    rest = substr(rest, RSTART + RLENGTH)
  }
  m = 0; rest = text
  while (match(rest, /"severity":"P[0-3]"/)) {
    m++; S[m] = substr(rest, RSTART + 12, 2); rest = substr(rest, RSTART + RLENGTH)
  }
  c = 0; rest = text
  while (match(rest, /"confidence":[0-9.]+/)) {
    c++; W[c] = substr(rest, RSTART + 13, RLENGTH - 13) + 0; rest = substr(rest, RSTART + RLENGTH)
    if (W[c] > 1) W[c] /= 100
    W[c] += 0.05
  }
  k = 0; rest = text
  while (match(rest, /"title":"[^"]*"/)) {
    k++; T[k] = substr(rest, RSTART + 9, RLENGTH - 10); rest = substr(rest, RSTART + RLENGTH)
  }
  real = 0; important = 0; weight = 0
  for (i = 1; i <= k; i++) {
    real += W[i] * (real_of(T[i]) + (R[i] >= 2 ? 0.06 : 0))
    important += W[i] * important_of(S[i])
    weight += W[i]
  }
  if (k == 0) { real = 0.5; important = 0.2 } else { real /= weight; important /= weight }
  printf "{\"per_dimension\": {\"real\": %.2f, \"important\": %.2f}, \"rationale\": \"%d finding(s) read by %s\"}\n", clamp(real + bias + jitter), clamp(important + bias + jitter), k, judge
}
'
