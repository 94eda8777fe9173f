#!/usr/bin/env bash
# Times what recording each session's work adds to the hook that runs after every tool call
# (PostToolUse): `checkpoint-claude` after a Bash call (a look at the tree: `git status` and the
# changed files' digests, from the memo) and after an Edit (the named file claimed, no look), in a
# small repository and in 3000- and 20000-file repositories with 7 changed paths, against the same
# events answered by an earlier build (today's PostToolUse, measured in the same run), and the
# empty Rust binary. Repeated calls change nothing, so the record is not rewritten: the steady
# cost of a tool call.
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

# The PostToolUse payload for TOOL (Bash or Edit) in DIR, written to $work.
payload() {
    local tool="$1" dir="$2" out="$work/post-$1-$(basename "$2").json"
    python3 - "$root/tests/payloads/claude/PostToolUse.json" "$tool" "$dir" "$out" <<'PY'
import json
import sys

src, tool, cwd, out = sys.argv[1:]
payload = json.load(open(src))
payload["cwd"] = cwd
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
    row "empty Rust binary" "'$empty_bin' < '$(payload Bash "$repo")'"
    for tool in Bash Edit; do
        p="$(payload "$tool" "$repo")"
        row "$tool, today" "'$BASELINE_BIN/checkpoint-claude' < '$p'"
        row "$tool, with work recorded" "'$bin/checkpoint-claude' < '$p'"
    done
    compare "PostToolUse in $name" "Bash, today" "sharing-$name"
done
