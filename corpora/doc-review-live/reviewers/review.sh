#!/bin/sh
# A stand-in for an LLM document reviewer, for `calibench collect` (docs/guides/live-collection.md).
#
#   review.sh PERSONA TARGET ARM RUN   < document.md
#
# It plays one persona (coherence, feasibility or product-lens) over the document on stdin and
# follows the contract a real reviewer command follows:
#   - the compact return (merge-tier fields only) on stdout, as one JSON object;
#   - the full-detail return (with why_it_matters and evidence) written to $CALIBENCH_ARTIFACT;
#   - confidence on the arm's scale: a float in [0, 1] for the `float` arm, one of
#     0/25/50/75/100 for the `anchored` arm.
# It reports what the call spent (`usage`: tokens from the document's length and the arm's
# prompt, priced per token), as a model API does, and how long the model took (`elapsed_ms`,
# from the tokens: a harness that times its own model call reports that rather than the
# process's wall time, which collect records otherwise).
# It is deterministic — the same persona, document, arm and run always give the same return —
# and needs nothing but POSIX sh and awk: no model, no network.
#
# Two calls misbehave on purpose, to show what collect does with them:
#   - product-lens on `pricing`, run 1, is "rate limited" on its first attempt (exit 75) and
#     succeeds when collect retries it;
#   - feasibility on `search-relaunch`, `anchored` arm, run 1, answers in prose instead of JSON
#     on every attempt, and is recorded as a failed call with that reason.

set -eu
persona=$1 target=$2 arm=$3 run=$4
attempt=${CALIBENCH_ATTEMPT:-1}

if [ "$persona" = product-lens ] && [ "$target" = pricing ] && [ "$run" = 1 ] && [ "$attempt" = 1 ]; then
  echo "429 Too Many Requests: rate limited, retry later" >&2
  exit 75
fi
if [ "$persona" = feasibility ] && [ "$target" = search-relaunch ] && [ "$arm" = anchored ] && [ "$run" = 1 ]; then
  echo "I reviewed the plan and it looks mostly feasible, though the timeline is ambitious."
  exit 0
fi

awk -v persona="$persona" -v arm="$arm" -v run="$run" -v artifact="${CALIBENCH_ARTIFACT:-}" '
function hash(s,    i, h) {
  h = 7
  for (i = 1; i <= length(s); i++) h = (h * 31 + ord[substr(s, i, 1)]) % 1000003
  return h
}
function esc(s) {
  gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, " ", s)
  return s
}
# Confidence on the arm scale: the rule base, moved by up to +-0.12 by a hash of who says what
# where, and on which run.
function confidence(base, title,    j, c) {
  j = (hash(persona "|" section "|" title "|" run) % 25 - 12) / 100
  c = base + j
  if (c < 0.05) c = 0.05
  if (c > 0.99) c = 0.99
  if (arm == "anchored") return int(c * 4 + 0.5) * 25
  return sprintf("%.2f", c)
}
function add(title, severity, type, fix_class, fix, base, why,    key) {
  key = section "|" title
  if (key in seen) return
  seen[key] = 1
  n++
  T[n] = title; S[n] = severity; Y[n] = type; A[n] = fix_class; F[n] = fix
  C[n] = confidence(base, title); W[n] = why; E[n] = $0; P[n] = section
}
function finding(i, detail,    out) {
  out = sprintf("{\"id\": \"f%d\", \"title\": \"%s\", \"severity\": \"%s\", \"section\": \"%s\", \"finding_type\": \"%s\", \"autofix_class\": \"%s\", \"confidence\": %s, \"suggested_fix\": %s", i, esc(T[i]), S[i], esc(P[i]), Y[i], A[i], C[i], F[i] == "" ? "null" : "\"" esc(F[i]) "\"")
  if (detail) out = out sprintf(", \"why_it_matters\": \"%s\", \"evidence\": [\"%s\"]", esc(W[i]), esc(E[i]))
  return out "}"
}
function ret(detail,    i, out, input, output) {
  out = "{\"findings\": ["
  for (i = 1; i <= n; i++) out = out (i > 1 ? ", " : "") finding(i, detail)
  out = out "], \"residual_risks\": [], \"deferred_questions\": []"
  if (!detail) {
    # What the call spent, as a model API reports it: the document and the prompt read (the
    # anchored rubric prompt is longer), the findings written; priced per token.
    input = int(chars / 4) + (arm == "anchored" ? 1900 : 1400)
    output = 80 + 55 * n
    out = out sprintf(", \"usage\": {\"input_tokens\": %d, \"output_tokens\": %d, \"cost_usd\": %.6f}", input, output, input * 0.000003 + output * 0.000015)
    # Time to first token grows with what is read; then about 14 ms per token written.
    out = out sprintf(", \"elapsed_ms\": %d", 350 + int(input / 20) + 14 * output + hash(persona "|" run) % 90)
  }
  return out "}"
}
BEGIN { for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i; section = "Overview" }
{ chars += length($0) + 1 }
/^#+ / { section = $0; sub(/^#+ +/, "", section); next }
{
  line = tolower($0)
  if (persona == "coherence") {
    if (line ~ /tbd|todo/) add("Open decision left unresolved", "P1", "omission", "manual", "", 0.72, "Work that depends on the decision cannot start.")
    if (line ~ /never|always/) add("Absolute claim without support", "P3", "error", "safe_auto", "Qualify the claim or cite the measurement behind it.", 0.50, "Readers take absolute claims as commitments.")
    if (line ~ /\?[ ]*$/) add("Question left open in the plan", "P2", "omission", "manual", "", 0.58, "An open question in a plan is a decision nobody owns.")
  }
  if (persona == "feasibility") {
    if (line ~ /tbd|todo/) add("Open decision left unresolved", "P1", "omission", "manual", "", 0.66, "The schedule cannot hold while this is open.")
    if (line ~ /[0-9]+ (day|days|week|weeks)/) add("Timeline looks optimistic", "P1", "error", "gated_auto", "Add a buffer and name what is cut if it slips.", 0.62, "Estimates without slack are missed.")
    if (line ~ /migrat|rewrite|replace/) add("Migration is not sized", "P0", "omission", "manual", "", 0.80, "An unsized migration is where plans fail.")
  }
  if (persona == "product-lens") {
    if (line ~ /user|customer/ && line !~ /[0-9]/) add("User outcome has no success metric", "P2", "omission", "manual", "", 0.55, "Without a metric nobody can tell whether it worked.")
    if (line ~ /launch|ship|release/) add("Rollout has no rollback path", "P1", "omission", "manual", "", 0.70, "A launch without a way back turns a bad day into a bad week.")
    if (line ~ /[0-9]+ (day|days|week|weeks)/) add("Timeline looks optimistic", "P2", "error", "gated_auto", "Add a buffer and name what is cut if it slips.", 0.50, "Dates shape what customers are promised.")
  }
}
END {
  if (artifact != "") print ret(1) > artifact
  print ret(0)
}
'
