#!/usr/bin/env bash
# The GitHub Action's step (action.yml): runs `checkpoint ci` on the checkout, appends its
# summary to the job summary, keeps one comment on the pull request up to date with it, and
# says where the SARIF file is. Exits with checkpoint's status (0 passed, 1 failed, 2 not
# everything could be checked, 3 a setup problem).
#
# Reads GitHub's variables: GITHUB_EVENT_PATH (the pull request's number and base commit),
# GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, RUNNER_TEMP; for the comment GITHUB_API_URL,
# GITHUB_REPOSITORY and GITHUB_TOKEN. CHECKPOINT_CI_BASE overrides the base,
# CHECKPOINT_CI_COMMENT=false leaves the pull request alone.
set -uo pipefail

out="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/checkpoint-ci"
mkdir -p "$out"
rm -f "$out/summary.md" "$out/stderr.txt" "$out/checkpoint.sarif" "$out/checkpoint.json"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

event_field() {
  [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ] || return 0
  python3 - "$GITHUB_EVENT_PATH" "$1" <<'PY'
import json, sys
value = json.load(open(sys.argv[1], encoding="utf-8"))
for key in sys.argv[2].split("."):
    value = value.get(key) if isinstance(value, dict) else None
print("" if value is None else value)
PY
}

base="${CHECKPOINT_CI_BASE:-}"
[ -n "$base" ] || base="$(event_field pull_request.base.sha)"
args=(ci --sarif "$out/checkpoint.sarif" --json "$out/checkpoint.json")
[ -n "$base" ] && args+=(--base "$base")

checkpoint "${args[@]}" >"$out/summary.md" 2>"$out/stderr.txt"
status=$?
cat "$out/stderr.txt" >&2
if [ ! -s "$out/summary.md" ]; then
  # An error before any verdict: say it where the verdict would have been.
  {
    echo "<!-- checkpoint-ci -->"
    echo "## checkpoint: could not judge this change"
    echo
    echo '```text'
    head -c 4000 "$out/stderr.txt"
    echo '```'
  } >"$out/summary.md"
fi
cat "$out/summary.md"

case "$status" in
  0) result=passed ;;
  1) result=failed ;;
  *) result=unchecked ;;
esac
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "result=$result" >>"$GITHUB_OUTPUT"
  [ -s "$out/checkpoint.sarif" ] && echo "sarif=$out/checkpoint.sarif" >>"$GITHUB_OUTPUT"
fi

number="$(event_field pull_request.number)"
if [ "${CHECKPOINT_CI_COMMENT:-true}" = "true" ] && [ -n "$number" ]; then
  python3 "$here/pr_comment.py" "$number" "$out/summary.md" ||
    echo "checkpoint: the pull request comment could not be written (the summary is above)" >&2
fi
exit "$status"
