#!/usr/bin/env bash
# Times what restore and verify add, against `git status --porcelain` in the same hyperfine run:
#
# 1. The tested tree a receipt records (`git add -A` into a copy of the index, `git write-tree`):
#    the cost a stop that writes a receipt pays on top of its test run.
# 2. `checkpoint restore --dry-run` (the plan: every check, nothing written) next to
#    `checkpoint diff`, which compares the same paths: a checkpoint of the fixture's 7 changed
#    paths, then 3 more edits.
# 3. `checkpoint verify HEAD` with one task holding a receipt.
#
#   bench/restore.sh [FILES...]        default: 20000 3000
#
# Commands run through a shell (the binaries read the current directory); hyperfine subtracts
# the shell's start-up. Needs hyperfine and python3. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

work="$target/bench-repos/restore"
export CHECKPOINT_STATE_DIR="$work/state" XDG_CONFIG_HOME="$work/config"

release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate
release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-engine --example tree
bin="$release"

sizes=("$@")
[ "${#sizes[@]}" -gt 0 ] || sizes=(20000 3000)
for size in "${sizes[@]}"; do
    dir="$work/repo-$size"
    rm -rf "$dir" "$CHECKPOINT_STATE_DIR"
    mkdir -p "$work"
    cp -a "$(repo_with "$size")" "$dir"
    (
        cd "$dir"
        git status --porcelain > /dev/null
        "$bin/checkpoint" save "bench" > /dev/null
        "$bin/checkpoint" task start bench --steps a > /dev/null
        "$bin/checkpoint" step start > /dev/null
        "$bin/checkpoint" validate -- true > /dev/null
        for f in $(git ls-files | head -3); do echo "edit" >> "$f"; done
    )
    row "git status --porcelain" "cd $dir && git status --porcelain"
    row "tested tree (receipt)" "cd $dir && $release/examples/tree"
    row "checkpoint diff" "cd $dir && $bin/checkpoint diff"
    row "checkpoint restore --dry-run" "cd $dir && $bin/checkpoint restore --dry-run"
    row "checkpoint verify HEAD" "cd $dir && $bin/checkpoint verify HEAD; true"
    compare "$size files" "git status --porcelain" "restore-$size"
done
