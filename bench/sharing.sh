#!/usr/bin/env bash
# Times what recording each session's work adds to the hook that runs after every tool call
# (PostToolUse): `checkpoint-claude` after a Bash call and after an Edit (the named file claimed),
# with the session alone (no look at the tree) and beside another live session (after Bash, a
# look: `git status` and the changed files' digests, from the memo), in a small repository and in
# 3000- and 20000-file repositories with 7 changed paths, against the same events answered by an
# earlier build (today's PostToolUse, measured in the same run), and the empty Rust binary.
# Repeated calls change nothing, so the record is not rewritten: the steady cost of a tool call.
#
#   BASELINE_BIN=<dir> bench/sharing.sh [FILES...]      default: 3000 20000
#
# BASELINE_BIN is a release target directory of the build to compare with (e.g. one built from
# the commit before this feature); it must hold `checkpoint-claude`. Needs hyperfine and python3.
# Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

: "${BASELINE_BIN:?set BASELINE_BIN to the release directory of the build to compare with}"
bin="$release"
work="$target/bench-repos/sharing"
export CHECKPOINT_STATE_DIR="$work/state" XDG_CONFIG_HOME="$work/config"

build() {
    release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p adapter-claude
    build_empty
}

# The Claude Code payload EVENT for TOOL (Bash or Edit) in DIR, of session SESSION, written to
# $work.
payload() {
    local event="$1" tool="$2" dir="$3" session="$4"
    local out="$work/$1-$2-$(basename "$3")-$4.json"
    python3 - "$root/tests/payloads/claude/$event.json" "$tool" "$dir" "$session" "$out" <<'PY'
import json
import sys

src, tool, cwd, session, out = sys.argv[1:]
payload = json.load(open(src))
payload["cwd"] = cwd
payload["session_id"] = session
payload["tool_name"] = tool
if tool == "Edit":
    payload["tool_input"] = {"file_path": cwd + "/README.md", "old_string": "a", "new_string": "b"}
json.dump(payload, open(out, "w"))
PY
    echo "$out"
}

mkdir -p "$work/state" "$work/config"
build
small="$work/repo"
if [ ! -d "$small" ]; then
    mkdir -p "$small"
    (cd "$small" && isolated_git && bash -eu "$root/tests/fixtures/python-passing.sh" > /dev/null)
fi
repos=("$small")
for n in "${@:-3000 20000}"; do
    for files in $n; do repos+=("$(repo_with "$files")"); done
done
for repo in "${repos[@]}"; do
    name="$(basename "$repo")"
    # Alone, and beside another live session: a state directory each (the other session
    # started in the second), fresh for each run.
    alone="$work/state-alone-$name" beside="$work/state-beside-$name"
    rm -rf "$alone" "$beside"
    CHECKPOINT_STATE_DIR="$beside" "$bin/checkpoint-claude" \
        < "$(payload SessionStart - "$repo" other-session)" > /dev/null
    row "empty Rust binary" "'$empty_bin' < '$(payload PostToolUse Bash "$repo" me)'"
    for tool in Bash Edit; do
        p="$(payload PostToolUse "$tool" "$repo" me)"
        row "$tool, today" "CHECKPOINT_STATE_DIR='$alone' '$BASELINE_BIN/checkpoint-claude' < '$p'"
        row "$tool, alone" "CHECKPOINT_STATE_DIR='$alone' '$bin/checkpoint-claude' < '$p'"
        row "$tool, beside a live session" \
            "CHECKPOINT_STATE_DIR='$beside' '$bin/checkpoint-claude' < '$p'"
    done
    compare "PostToolUse in $name" "Bash, today" "sharing-$name"
done
