#!/usr/bin/env bash
# Times the test-integrity analysis on a stop: a Python project with 100 changed test files (each
# of 20 tests gains one more, an honest change: no finding), its test command cached green,
# commit gate off. `checkpoint check` with `[integrity] mode = "off"` is the baseline row; the
# difference to the default (`block`) row is what the analysis adds to a stop.
#
#   bench/integrity.sh [FILES]      default: 100
#
# Needs hyperfine and python3. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

files="${1:-100}"
bin="$release"
work="$target/bench-repos/integrity-$files"
export CHECKPOINT_STATE_DIR="$work/state" XDG_CONFIG_HOME="$work/config"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com

release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate

# The repository: FILES committed test modules of 20 tests each, then one test more in each.
repo="$work/repo"
if [ ! -d "$repo" ]; then
    mkdir -p "$repo"
    python3 - "$repo" "$files" <<'PY'
import pathlib
import sys

repo, files = pathlib.Path(sys.argv[1]), int(sys.argv[2])
(repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
(repo / "tests").mkdir()
for f in range(files):
    body = ["import unittest", "", "from calc import add", "", "", "class T(unittest.TestCase):"]
    for t in range(20):
        body += [f"    def test_{t}(self):", f"        self.assertEqual(add({t}, 1), {t + 1})", ""]
    (repo / "tests" / f"test_mod_{f:03}.py").write_text("\n".join(body) + "\n")
(repo / "checkpoint.toml").write_text('[tests]\ncommand = "true"\n\n[stop]\ncommit_gate = false\n')
PY
    git -C "$repo" init -q -b main
    git -C "$repo" add -A
    git -C "$repo" commit -qm "tests"
    for f in "$repo"/tests/test_mod_*.py; do
        printf '    def test_more(self):\n        self.assertEqual(add(0, 0), 0)\n' >> "$f"
    done
fi
(cd "$repo" && "$bin/checkpoint" trust --yes > /dev/null && "$bin/checkpoint" check > /dev/null)

row "check, [integrity] mode = off" "cd '$repo' && CHECKPOINT_INTEGRITY_MODE=off '$bin/checkpoint' check"
row "check, [integrity] mode = block" "cd '$repo' && '$bin/checkpoint' check"
compare "stop, $files changed test files, cached green" "check, [integrity] mode = off" "integrity-$files"
