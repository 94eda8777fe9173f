#!/usr/bin/env bash
# Times the hooks as agents run them:
#
# 1. A stop with nothing to run, on unchanged 20000- and 3000-file repositories:
#    `checkpoint check` and each adapter's end-of-turn event, against `git status --porcelain`.
# 2. The per-tool-call path: each adapter on its pre-tool event, Claude's post-tool event (a shell
#    call, and an `Edit` of a test file: as at HEAD, and weakened), and a stop whose tests are
#    cached green, against an empty Rust binary.
#
#   bench/gate.sh [FILES...]        default: 20000 3000
#
# With BASELINE_BIN=<dir> (a release target directory of an earlier build, e.g. another worktree's
# `target/release`), every checkpoint row is measured for those binaries too, in the same
# hyperfine run, named `… (baseline)`: before/after figures under the same conditions.
#
# Payloads are fed on stdin, so commands run through a shell and hyperfine subtracts the shell's
# start-up. Needs hyperfine and python3. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin="$release"
work="$target/bench-repos/gate"
state="$work/state"
export CHECKPOINT_STATE_DIR="$state" XDG_CONFIG_HOME="$work/config"

build() {
    release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate \
        -p adapter-claude -p adapter-gemini -p adapter-codex
    build_empty
}

# Writes tests/payloads/<agent>/<name>.json with `cwd` set to DIR to $work/<agent>-<name>.json.
payload() {
    local agent="$1" name="$2" dir="$3" out="$work/$1-$2-$(basename "$3").json"
    python3 - "$root/tests/payloads/$agent/$name.json" "$dir" "$out" <<'PY'
import json
import sys

src, cwd, out = sys.argv[1:]
payload = json.load(open(src))
payload["cwd"] = cwd
json.dump(payload, open(out, "w"))
PY
    echo "$out"
}

# An unchanged clone of the N-file repository.
clean_repo() {
    local n="$1" dir="$work/clean-$1"
    [ -d "$dir" ] || git clone --quiet "$(repo_with "$n")" "$dir"
    git -C "$dir" status --porcelain > /dev/null
    echo "$dir"
}

# A small Python project with an uncommitted change whose tests pass, commit gate off, trusted
# (its test command and `commit_gate = false` approved): every stop after the first reuses the
# cached green outcome.
green_repo() {
    local dir="$work/green"
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir"
        (cd "$dir" && bash -eu "$root/tests/fixtures/python-passing.sh")
        printf '\n[stop]\ncommit_gate = false\n' >> "$dir/checkpoint.toml"
        printf '\n\ndef mul(a, b):\n    return a * b\n' >> "$dir/calc.py"
    fi
    (cd "$dir" && "$bin/checkpoint" trust --yes > /dev/null && "$bin/checkpoint" check > /dev/null)
    echo "$dir"
}

# Appends a row for a command of ours, COMMAND with `{bin}` standing for the binaries' directory:
# once for this build, and once for BASELINE_BIN's when it is set.
ours() {
    local name="$1" command="$2"
    row "$name" "${command//\{bin\}/$bin}"
    if [ -n "${BASELINE_BIN:-}" ]; then
        row "$name (baseline)" "${command//\{bin\}/$BASELINE_BIN}"
    fi
}

stop_with_nothing_to_run() {
    local n="$1" repo
    repo="$(clean_repo "$n")"
    row "git status --porcelain" "git -C '$repo' status --porcelain"
    ours "checkpoint check" "cd '$repo' && '{bin}/checkpoint' check < /dev/null"
    ours "checkpoint-claude Stop" "'{bin}/checkpoint-claude' < '$(payload claude Stop "$repo")'"
    ours "checkpoint-gemini AfterAgent" "'{bin}/checkpoint-gemini' < '$(payload gemini AfterAgent "$repo")'"
    ours "checkpoint-codex Stop" "'{bin}/checkpoint-codex' < '$(payload codex Stop "$repo")'"
    compare "stop, nothing to run, $n files" "git status --porcelain" "gate-stop-$n"
}

# Claude's PostToolUse for an `Edit` of FILE (absolute) in DIR, written to $work.
edit_payload() {
    local dir="$1" file="$2" out="$work/claude-PostToolUse-Edit-$(basename "$1").json"
    python3 - "$(payload claude PostToolUse "$dir")" "$file" "$out" <<'PY'
import json
import sys

src, file, out = sys.argv[1:]
payload = json.load(open(src))
payload["tool_name"] = "Edit"
payload["tool_input"] = {"file_path": file, "old_string": "a", "new_string": "b"}
json.dump(payload, open(out, "w"))
PY
    echo "$out"
}

# A small Python project whose test file has a skip marker added (uncommitted), trusted: an
# edit tool's PostToolUse on it compares the file with HEAD and finds the weakening.
weakened_repo() {
    local dir="$work/weakened"
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir"
        (cd "$dir" && bash -eu "$root/tests/fixtures/python-passing.sh")
        sed -i 's/^    def test_add/    @unittest.skip("later")\n    def test_add/' "$dir/test_calc.py"
    fi
    (cd "$dir" && "$bin/checkpoint" trust --yes > /dev/null)
    echo "$dir"
}

per_tool_call() {
    local green weakened
    green="$(green_repo)"
    weakened="$(weakened_repo)"
    local pre="$work/pre"
    mkdir -p "$pre"
    row "empty Rust binary" "'$empty_bin' < '$(payload claude PreToolUse "$pre")'"
    ours "checkpoint-claude PreToolUse" "'{bin}/checkpoint-claude' < '$(payload claude PreToolUse "$pre")'"
    ours "checkpoint-gemini BeforeTool" "'{bin}/checkpoint-gemini' < '$(payload gemini BeforeTool "$pre")'"
    ours "checkpoint-codex PreToolUse" "'{bin}/checkpoint-codex' < '$(payload codex PreToolUse "$pre")'"
    # After a tool call: a shell call (no file named), an edit of a test file that is as at
    # HEAD, and one of a weakened test file (told before: the analysis runs, no note again).
    ours "checkpoint-claude PostToolUse, shell" "'{bin}/checkpoint-claude' < '$(payload claude PostToolUse "$green")'"
    ours "checkpoint-claude PostToolUse, Edit of an unchanged test" "'{bin}/checkpoint-claude' < '$(edit_payload "$green" "$green/test_calc.py")'"
    ours "checkpoint-claude PostToolUse, Edit of a weakened test" "'{bin}/checkpoint-claude' < '$(edit_payload "$weakened" "$weakened/test_calc.py")'"
    ours "checkpoint-claude Stop, cached green" "'{bin}/checkpoint-claude' < '$(payload claude Stop "$green")'"
    ours "checkpoint check, cached green" "cd '$green' && '{bin}/checkpoint' check < /dev/null"
    # The same stop by a user who never trusted the project (own config and state): nothing runs,
    # `commit_gate = false` is held back, so the stop blocks on the uncommitted change.
    local untrusted="XDG_CONFIG_HOME='$work/untrusted' CHECKPOINT_STATE_DIR='$work/untrusted/state'"
    ours "checkpoint-claude Stop, green, untrusted" "$untrusted '{bin}/checkpoint-claude' < '$(payload claude Stop "$green")'"
    compare "per tool call" "empty Rust binary" "gate-per-call"
}

sizes=("$@")
if [ "${#sizes[@]}" -eq 0 ]; then
    sizes=(20000 3000)
fi
mkdir -p "$work" "$state"
build
for n in "${sizes[@]}"; do
    stop_with_nothing_to_run "$n"
done
per_tool_call
