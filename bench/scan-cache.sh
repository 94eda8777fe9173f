#!/usr/bin/env bash
# What the cached import scan saves on a stop: `checkpoint check` after a one-file change in
# Django 5.1.4's sdist (2,788 `.py` files), its test command stubbed out (a `python` on PATH
# that exits 0), so the stop is the change set, the selection's scan and the bookkeeping. Rows:
# the scan's cache emptied before each run (every file read and parsed: what each stop cost
# before the cache), and kept (only the changed file read). With BASELINE_BIN (the release
# directory of an earlier build), that build's `checkpoint check` is measured in the same run.
#
#   bench/scan-cache.sh
#   BASELINE_BIN=../main/target/release bench/scan-cache.sh
#
# Needs hyperfine, python3 with pip and network access on the first run. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS="${RUNS:-10}"
WARMUP="${WARMUP:-2}"
work="$target/bench-repos/scan-cache"
bin="$release/checkpoint"
export XDG_CONFIG_HOME="$work/config"
isolated_git
mkdir -p "$work"

release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate

django="$work/django"
if [ ! -d "$django" ]; then
    tmp="$work/download"
    rm -rf "$tmp" && mkdir -p "$tmp"
    python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$tmp" django==5.1.4
    tar --no-same-owner -xzf "$tmp"/[Dd]jango-5.1.4.tar.gz -C "$tmp"
    mv "$tmp"/[Dd]jango-5.1.4 "$django"
    (
        cd "$django"
        printf '[tests]\ncommand = "python -m unittest -q"\n' > checkpoint.toml
        git init -q -b main
        git add -A
        git commit -q -m "upstream sources"
        "$bin" trust --yes > /dev/null
    )
fi

# The test command's stand-in: the stop measures everything but the tests.
stub="$work/stub"
rm -rf "$stub" && mkdir -p "$stub"
printf '#!/bin/sh\nexit 0\n' > "$stub/python"
chmod +x "$stub/python"
export PATH="$stub:$PATH"

git -C "$django" checkout --quiet -- .
printf '%s\n' '# touched' >> "$django/django/utils/text.py"
state="$django/.git/checkpoint"
(cd "$django" && "$bin" check || true) | grep -F 'Only the affected' || true
check="cd '$django' && '$bin' check > /dev/null 2>&1 || true"
# One --prepare per row, in order: the test cache is always emptied, so every stop runs the
# selection (and the stubbed command) for real.
prepares=(--prepare "rm -rf '$state/cache' '$state/select'" --prepare "rm -rf '$state/cache'")
row "cache emptied" "$check"
row "cache kept" "$check"
if [ -n "${BASELINE_BIN:-}" ]; then
    row "baseline build" "cd '$django' && '$BASELINE_BIN/checkpoint' check > /dev/null 2>&1 || true"
    prepares+=(--prepare "rm -rf '$state/cache'")
fi
compare "django: a stop after a one-file change" "cache emptied" scan-cache "${prepares[@]}"
git -C "$django" checkout --quiet -- .
