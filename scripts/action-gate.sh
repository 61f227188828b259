#!/bin/sh
# The gate step of the calibench GitHub Action (action.yml): `calibench gate` on the experiment
# or run directory, with the policy, JUnit and summary files asked for. calibench appends its
# Markdown summary to $GITHUB_STEP_SUMMARY itself; when it refuses its input (exit 2) this step
# says so there, so the summary page never stays silent. Exits with the gate's status: 0 every
# check passed, 1 a check failed, 2 bad input.
#
# Environment (set by action.yml): INPUT_EXPERIMENT or INPUT_RUN_DIR (one of them),
# INPUT_POLICY, INPUT_JUNIT, INPUT_SUMMARY, INPUT_ARGS (more flags, split on spaces),
# CALIBENCH (the binary; default `calibench` on PATH), GITHUB_STEP_SUMMARY, GITHUB_OUTPUT.
set -eu

calibench=${CALIBENCH:-calibench}
experiment=${INPUT_EXPERIMENT:-}
run_dir=${INPUT_RUN_DIR:-}
if [ -n "$experiment" ] && [ -n "$run_dir" ]; then
    echo "error: the action takes \`experiment\` or \`run-dir\`, not both" >&2
    exit 2
elif [ -n "$experiment" ]; then
    subject=$experiment
elif [ -n "$run_dir" ]; then
    subject=$run_dir
else
    echo "error: the action needs \`experiment\` (an experiment.toml or its folder) or \`run-dir\` (a run to check)" >&2
    exit 2
fi

set -- gate "$subject"
[ -z "${INPUT_POLICY:-}" ] || set -- "$@" --policy "$INPUT_POLICY"
[ -z "${INPUT_JUNIT:-}" ] || set -- "$@" --junit "$INPUT_JUNIT"
[ -z "${INPUT_SUMMARY:-}" ] || set -- "$@" --summary "$INPUT_SUMMARY"
# Extra flags, split on spaces as a shell would, but never globbed.
set -f
# shellcheck disable=SC2086
[ -z "${INPUT_ARGS:-}" ] || set -- "$@" $INPUT_ARGS
set +f

status=0
"$calibench" "$@" || status=$?
# The answer first: the step's output must hold the gate's status whatever else fails.
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "exit-code=$status" >>"$GITHUB_OUTPUT" ||
        echo "warning: could not write exit-code to \$GITHUB_OUTPUT" >&2
fi
if [ "$status" -ge 2 ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    # The subject is the user's text: shown in a fenced block, never as Markdown, with any
    # backtick turned into a quote so it cannot close the fence.
    shown=$(printf '%s' "$subject" | tr '`\n\r' "'  ")
    printf '### calibench gate: not run\n\n`calibench gate` refused its input (exit %s): the log says which file, line and field. The subject was:\n\n```text\n%s\n```\n' \
        "$status" "$shown" >>"$GITHUB_STEP_SUMMARY" ||
        echo "warning: could not append to \$GITHUB_STEP_SUMMARY ($GITHUB_STEP_SUMMARY)" >&2
fi
exit "$status"
