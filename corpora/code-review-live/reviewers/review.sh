#!/bin/sh
# A stand-in for an LLM code reviewer, for `calibench collect` (docs/guides/live-collection.md).
#
#   review.sh PERSONA TARGET ARM RUN   < change.diff
#
# It reads a unified diff on stdin, plays one persona (correctness, security, testing or
# maintainability) over the lines the change adds, and follows the reviewer contract:
#   - the compact return (merge-tier fields only) on stdout, as one JSON object;
#   - the full-detail return (with why_it_matters and evidence) written to $CALIBENCH_ARTIFACT;
#   - each finding placed at the file and line the diff adds it on;
#   - confidence on the arm's scale: a float in [0, 1] for the `float` arm, one of
#     0/25/50/75/100 for the `anchored` arm.
# It reports what the call spent (`usage`: tokens from the diff's length and the arm's prompt,
# priced per token) and how long the model took (`elapsed_ms`, from the tokens), as a harness
# that times its own model call does.
# Deterministic (the same persona, diff, arm and run always give the same return); POSIX sh
# and awk only: no model, no network.

set -eu
persona=$1 target=$2 arm=$3 run=$4

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
# Confidence on the arm scale: the rule base, moved by up to +-0.10 by a hash of who says what
# where, and on which run.
function confidence(base, title, file, line,    j, c) {
  j = (hash(persona "|" file "|" line "|" title "|" run) % 21 - 10) / 100
  c = base + j
  if (c < 0.05) c = 0.05
  if (c > 0.99) c = 0.99
  if (arm == "anchored") return int(c * 4 + 0.5) * 25
  return sprintf("%.2f", c)
}
function add(title, severity, class, owner, fix, base, why, text,    key) {
  key = file "|" line "|" title
  if (key in seen) return
  seen[key] = 1
  n++
  T[n] = title; S[n] = severity; A[n] = class; O[n] = owner; F[n] = fix
  L[n] = line; P[n] = file; W[n] = why; E[n] = text
  C[n] = confidence(base, title, file, line)
}
function finding(i, detail,    out) {
  out = sprintf("{\"id\": \"f%d\", \"title\": \"%s\", \"severity\": \"%s\", \"file\": \"%s\", \"line\": %d, \"autofix_class\": \"%s\", \"owner\": \"%s\", \"requires_verification\": %s, \"pre_existing\": false, \"confidence\": %s, \"suggested_fix\": %s", i, esc(T[i]), S[i], esc(P[i]), L[i], A[i], O[i], (S[i] == "P0" || S[i] == "P1") ? "true" : "false", C[i], F[i] == "" ? "null" : "\"" esc(F[i]) "\"")
  if (detail) out = out sprintf(", \"why_it_matters\": \"%s\", \"evidence\": [\"%s\"]", esc(W[i]), esc(E[i]))
  return out "}"
}
function ret(detail,    i, out, input, output) {
  out = "{\"findings\": ["
  for (i = 1; i <= n; i++) out = out (i > 1 ? ", " : "") finding(i, detail)
  out = out "], \"residual_risks\": [], \"testing_gaps\": []"
  if (!detail) {
    # The diff and the prompt read (the anchored rubric prompt is longer), the findings
    # written; priced per token. Time to first token grows with what is read, then about
    # 14 ms per token written.
    input = int(chars / 4) + (arm == "anchored" ? 2300 : 1600)
    output = 90 + 60 * n
    out = out sprintf(", \"usage\": {\"input_tokens\": %d, \"output_tokens\": %d, \"cost_usd\": %.6f}", input, output, input * 0.000003 + output * 0.000015)
    out = out sprintf(", \"elapsed_ms\": %d", 350 + int(input / 20) + 14 * output + hash(persona "|" run) % 90)
  }
  return out "}"
}
BEGIN { for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i }
{ chars += length($0) + 1 }
/^\+\+\+ / { file = $2; sub(/^b\//, "", file); if (file ~ /^tests\//) touched_tests = 1; next }
/^--- / { next }
/^@@ / { split($3, h, ","); line = substr(h[1], 2) + 0; next }
/^\+/ {
  text = substr($0, 2); l = tolower(text)
  if (file ~ /\.rs$/ && first_file == "") { first_file = file; first_line = line }
  if (persona == "correctness") {
    if (l ~ /unwrap\(\)/) add("Unchecked unwrap can panic", "P1", "gated_auto", "review-fixer", "Propagate the error with ? instead of unwrapping.", 0.72, "A panic here takes the whole worker down.", text)
    if (l ~ /sleep\(/) add("Blocking sleep on the request path", "P2", "manual", "downstream-resolver", "", 0.58, "A blocking sleep stalls every task on this thread.", text)
  }
  if (persona == "security") {
    if (l ~ /format!\(".*\/.*\{\}/ && l ~ /path/) add("File name from a request reaches a path unchecked", "P0", "manual", "human", "", 0.84, "A name like ../../etc/passwd writes outside the upload folder.", text)
    if (l ~ /unwrap\(\)/ && file ~ /http/) add("Unchecked unwrap can panic", "P1", "gated_auto", "review-fixer", "Return 400 instead of panicking on a missing header.", 0.66, "A client can crash the handler on purpose.", text)
  }
  if (persona == "maintainability") {
    if (l ~ /todo/) add("TODO left in new code", "P3", "advisory", "human", "", 0.50, "TODOs in new code are rarely picked up.", text)
    if (l ~ /\.clone\(\)/) add("Needless clone", "P3", "safe_auto", "review-fixer", "Borrow instead of cloning.", 0.46, "A clone of a large value costs an allocation per call.", text)
  }
  line++
  next
}
/^ / { line++ }
END {
  if (persona == "testing" && !touched_tests && first_file != "") {
    file = first_file; line = first_line
    add("New behaviour has no test", "P2", "advisory", "human", "", 0.62, "Nothing fails if this behaviour breaks.", "no file under tests/ changes")
  }
  if (artifact != "") print ret(1) > artifact
  print ret(0)
}
'
