#!/usr/bin/env bash
# `checkpoint report` on a large history: an active task after 10,000 checkpoints (as many
# history entries, the last 50 kept: history.sh's fixture), 50 session checkpoints in the
# continuity log, and 20 session records each holding as much as a record keeps (20 stops of 4
# test runs, 200 context samples, 10 starts; texts at their length caps). Times the page and
# `--json` (hyperfine) and prints their sizes.
#
#   bench/report.sh
#   RUNS=30 bench/report.sh
#
# The fixture goes under target/bench-repos/history/report-10000. Needs hyperfine and python3.
# Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

RUNS="${RUNS:-10}"
WARMUP="${WARMUP:-2}"
# history.sh's fixtures (`fixture`, `task_with`, `cp_in`, `payload`) and its release build.
. "$(dirname "${BASH_SOURCE[0]}")/history.sh"

dir="$work/report-10000"
mkdir -p "$work"
build
fixture "$dir"
payload "$dir" claude PostToolUse
task_with "$dir" 10000
for i in $(seq 50); do
    echo "x = $i" > "$dir/repo/calc_$i.py"
    cp_in "$dir" save "save $i" > /dev/null
done
# 20 session records at every bound of `session::activity`.
python3 - "$dir/state/sessions" <<'PY'
import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
long = lambda what: (what + " ") * (160 // (len(what) + 1))
for n in range(20):
    at = lambda i: f"2026-01-01T{n:02}:{i // 60 % 60:02}:{i % 60:02}Z"
    test = {"command": long("python3 -m pytest -q"), "narrowed": "3 of 40 test modules",
            "status": "failed", "duration_ms": 1234, "passed": 37, "failed": 3,
            "cached": False, "failing": [long("test_module.test_case")] * 3}
    stops = [{"at": at(i * 60), "turn_began": at(i * 60 - 30), "verdict": "blocked",
              "reason": "tests_failed", "headline": long("Tests: FAILED"),
              "reasons": [long("reason line")] * 12, "tests": [test] * 4,
              "findings": [long("test_calc.py:3: assertion removed")] * 5,
              "base": "0" * 40} for i in range(20)]
    samples = [{"at": at(i * 9), "percent": i % 100, "used": i * 1000, "window": 200000}
               for i in range(200)]
    starts = [{"at": at(i * 180), "source": "clear", "resumed_from": i} for i in range(10)]
    record = {"consecutive_blocks": 0, "last_block_digest": None, "stops": stops,
              "context": samples, "starts": starts}
    with open(os.path.join(out, f"claude-bench-{n:02}.json"), "w") as f:
        json.dump(record, f)
PY
report="cd $dir/repo && CHECKPOINT_STATE_DIR=$dir/state XDG_CONFIG_HOME=$dir/config"
echo "== hook.json $(du -h "$dir"/state/tasks/*/hook.json | cut -f1)," \
    "history/ $(du -sh "$dir"/state/tasks/*/history | cut -f1)," \
    "sessions/ $(du -sh "$dir"/state/sessions | cut -f1)" >&2
row "report (HTML)" "$report $bin/checkpoint report -o $dir/report.html"
row "report --json" "$report $bin/checkpoint report --json > $dir/report.json"
compare "checkpoint report, 10,000 checkpoints" "report (HTML)" "report-10000"
echo "page: $(wc -c < "$dir/report.html") bytes, JSON: $(wc -c < "$dir/report.json") bytes"
