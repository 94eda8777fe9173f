#!/usr/bin/env bash
# What the old-tests run (the tests as they were, on the new code; issue 32) adds to a stop whose
# test results are not cached yet: a Python project of 20 unittest modules of 20 tests each
# (`python3 -m unittest -q`), commit gate off, each timed run from an empty state directory.
# Three change sets, each measured with `[integrity] mode = off` (no integrity check at all: the
# baseline row, one test run) and the default `block`:
#
#   - 1 changed test file (one test more: an honest change),
#   - 20 changed test files (one test more in each),
#   - 1 changed source file and no test file (the old-tests run must not happen).
#
#   bench/old-tests.sh
#
# Needs hyperfine and python3. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

RUNS="${RUNS:-10}"
WARMUP="${WARMUP:-1}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin="$release"
work="$target/bench-repos/old-tests"
isolated_git
release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate

# A fresh repository for one change set: KIND is `tests-1`, `tests-20` or `code`.
make_repo() {
    local kind="$1" repo="$work/$1"
    rm -rf "$repo"
    mkdir -p "$repo"
    python3 - "$repo" <<'PY'
import pathlib
import sys

repo = pathlib.Path(sys.argv[1])
(repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
(repo / "tests").mkdir()
(repo / "tests" / "__init__.py").write_text("")
for f in range(20):
    body = ["import unittest", "", "from calc import add", "", "", "class T(unittest.TestCase):"]
    for t in range(20):
        body += [f"    def test_{t}(self):", f"        self.assertEqual(add({t}, 1), {t + 1})", ""]
    (repo / "tests" / f"test_mod_{f:03}.py").write_text("\n".join(body) + "\n")
(repo / "checkpoint.toml").write_text(
    '[tests]\ncommand = "python3 -m unittest -q"\n\n[stop]\ncommit_gate = false\n'
)
PY
    git -C "$repo" init -q -b main
    git -C "$repo" add -A
    git -C "$repo" commit -qm "tests"
    local changed=()
    case "$kind" in
        tests-1) changed=("$repo/tests/test_mod_000.py") ;;
        tests-20) changed=("$repo"/tests/test_mod_*.py) ;;
        code) printf '\n\ndef sub(a, b):\n    return a - b\n' >> "$repo/calc.py" ;;
    esac
    for f in "${changed[@]}"; do
        printf '    def test_more(self):\n        self.assertEqual(add(0, 0), 0)\n' >> "$f"
    done
    (cd "$repo" && XDG_CONFIG_HOME="$work/config" "$bin/checkpoint" trust --yes > /dev/null)
}

for kind in tests-1 tests-20 code; do
    make_repo "$kind"
    repo="$work/$kind"
    state="$work/state-$kind"
    run="cd '$repo' && XDG_CONFIG_HOME='$work/config' CHECKPOINT_STATE_DIR='$state'"
    # Each run from an empty state directory: nothing cached.
    prepare="rm -rf '$state'"
    row "mode = off" "$run CHECKPOINT_INTEGRITY_MODE=off '$bin/checkpoint' check"
    row "mode = block" "$run '$bin/checkpoint' check"
    # Both rows must allow the stop (an honest change): a block would time another path.
    (cd "$repo" && XDG_CONFIG_HOME="$work/config" CHECKPOINT_STATE_DIR="$state" \
        "$bin/checkpoint" check > /dev/null)
    compare "stop, $kind, uncached" "mode = off" "old-tests-$kind" --prepare "$prepare"
done
