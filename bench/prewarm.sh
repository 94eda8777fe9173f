#!/usr/bin/env bash
# What warm results (`[tests] prewarm = true`) cost and win, on the boltons checkout that
# bench/select.sh prepares (run that first):
# - the PostToolUse hook, prewarm off against on (on: it also starts the background run, which
#   here finds the change set's outcome cached and ends);
# - a Stop after a one-file change, tests run by the stop (prewarm off) against a Stop that comes
#   after the background run started by the tool call has finished (prewarm on).
#
#   bench/prewarm.sh
#
# Needs hyperfine and python3. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

work="$target/bench-repos/select"
repo="$work/boltons"
[ -d "$repo" ] || { echo "run bench/select.sh first: it prepares $repo" >&2; exit 1; }
export XDG_CONFIG_HOME="$work/config" PATH="$work/venv/bin:$PATH"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate -p adapter-claude
hook="$release/checkpoint-claude"
state="$repo/.git/checkpoint"

payloads="$work/payloads"
mkdir -p "$payloads"
for event in PostToolUse Stop; do
    python3 - "$root/tests/payloads/claude/$event.json" "$repo" > "$payloads/$event.json" <<'PY'
import json
import sys

payload = json.load(open(sys.argv[1]))
payload["cwd"] = sys.argv[2]
print(json.dumps(payload))
PY
done

git -C "$repo" checkout --quiet -- .
printf '# touched\n' >> "$repo/boltons/strutils.py"
"$release/checkpoint" check > /dev/null 2>&1 || true # the change set's outcome, cached

off="rm -f '$state/prewarm-on'"
on="touch '$state/prewarm-on'"
row "PostToolUse, prewarm off" "$off; CHECKPOINT_TESTS_PREWARM=false '$hook' < '$payloads/PostToolUse.json'"
row "PostToolUse, prewarm on" "$on; CHECKPOINT_TESTS_PREWARM=true '$hook' < '$payloads/PostToolUse.json'"
compare "boltons: one tool call (the outcome cached)" "PostToolUse, prewarm off" prewarm-tool

RUNS="${STOP_RUNS:-5}"
WARMUP=0
# A new session each time: the same turn would stop running tests after its third block.
clear="rm -rf '$state/cache' '$state/sessions'"
row "Stop, prewarm off" "CHECKPOINT_TESTS_PREWARM=false '$hook' < '$payloads/Stop.json'"
row "Stop, prewarm on" "CHECKPOINT_TESTS_PREWARM=true '$hook' < '$payloads/Stop.json'"
compare "boltons: a Stop after a one-file change" "Stop, prewarm off" prewarm-stop \
    --prepare "$clear; $off" \
    --prepare "$clear; $on; CHECKPOINT_TESTS_PREWARM=true '$hook' < '$payloads/PostToolUse.json'; sleep 8"
git -C "$repo" checkout --quiet -- .
