#!/usr/bin/env bash
# Per-event cost against the task's history, the change set and a compressed Codex rollout,
# each curve measured in one hyperfine run and printed as ratios to its smallest point:
#
#   1. an active task after 10 / 300 / 1k / 10k checkpoints (as many history entries; the last
#      50 checkpoints kept, the default `max_checkpoints`): PostToolUse, an allowed Stop and
#      `checkpoint status`, × the same after 10;
#   2. 1 / 100 / 2k / 10k changed files, without and with an active task (with: after 50 stops,
#      each after an edit): an allowed Stop over unchanged work and PostToolUse × `git status
#      --porcelain` on the same repository, and their peak RSS;
#   3. a 1 MB and a 100 MB `.jsonl.zst` Codex rollout: PreToolUse (the context watch) and
#      PreCompact (a checkpoint whose summary is the rollout's last reply), cold (no memo of the
#      rollout) and warm;
#   4. a new session's Stop beside 10 / 1k / 10k sessions' files (the state of sessions that
#      never ended and were not yet expired), × the same beside 10;
#   5. 10 → 1k `checkpoint save`s of an active task, each after an edit: loose and packed
#      objects, the bytes of .git/objects, those beyond what the refs' tips hold (what retention
#      keeps) and the slowest save (one that packs), for this build and BASELINE_BIN's;
#   6. a stale index: 10,000 tracked files touched (stat data changed, content not), the first
#      and the second Stop after it, and a Stop on a fresh index, × `git status --porcelain` on
#      a fresh index.
#
#   bench/history.sh                 all six
#   bench/history.sh checkpoints     or any of: checkpoints changes rollout sessions saves stale
#   CHANGE_SIZES="2000" bench/history.sh changes     only these change-set sizes
#
# With BASELINE_BIN=<dir> (a release target directory of an earlier build) every checkpoint row
# is measured for those binaries too, in the same hyperfine run, named `… (baseline)`.
#
# Fixtures go under target/bench-repos/history/ (each task's state is restored before every
# timed run, so a stop's own checkpoint does not grow the next run's history). Needs hyperfine,
# python3, zstd and GNU time. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

RUNS="${RUNS:-10}"
WARMUP="${WARMUP:-2}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin="$release"
work="$target/bench-repos/history"
prepares=()

build() {
    release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" \
        -p checkpoint-gate -p adapter-claude -p adapter-codex
}

# Appends a row for this build (and BASELINE_BIN's), with PREPARE run untimed before each run.
# `{bin}` in COMMAND is the binaries' directory.
ours() {
    local name="$1" prepare="$2" command="$3"
    row "$name" "${command//\{bin\}/$bin}"
    prepares+=(--prepare "$prepare")
    if [ -n "${BASELINE_BIN:-}" ]; then
        row "$name (baseline)" "${command//\{bin\}/$BASELINE_BIN}"
        prepares+=(--prepare "$prepare")
    fi
}

# A row of another program, with PREPARE (default: nothing) run untimed before each run.
plain() {
    row "$1" "$2"
    prepares+=(--prepare "${3:-true}")
}

run_compare() {
    compare "$1" "$2" "$3" "${prepares[@]}"
    prepares=()
}

# A fresh python-passing repository in DIR with its state (and user config) inside it, no
# commit gate.
fixture() {
    local dir="$1"
    rm -rf "$dir"
    mkdir -p "$dir/repo"
    (
        cd "$dir/repo"
        bash -eu "$root/tests/fixtures/python-passing.sh" > /dev/null
        printf '[tests]\ncommand = "true"\n[stop]\ncommit_gate = false\n' > checkpoint.toml
        git add checkpoint.toml && git commit -qm bench
    )
    cp_in "$dir" trust --yes > /dev/null
}

# Runs checkpoint with DIR's state and config.
cp_in() {
    local dir="$1"
    shift
    (cd "$dir/repo" && CHECKPOINT_STATE_DIR="$dir/state" XDG_CONFIG_HOME="$dir/config" \
        "$bin/checkpoint" "$@")
}

# The claude payload EVENT with `cwd` set to DIR's repository, written to DIR/EVENT.json.
payload() {
    local dir="$1" agent="$2" event="$3" transcript="${4:-/dev/null}"
    python3 - "$root/tests/payloads/$agent/$event.json" "$dir/repo" "$transcript" \
        "$dir/$agent-$event.json" <<'PY'
import json
import sys

src, cwd, transcript, out = sys.argv[1:]
payload = json.load(open(src))
payload["cwd"] = cwd
payload["transcript_path"] = transcript
payload.pop("last_assistant_message", None)
json.dump(payload, open(out, "w"))
PY
}

# Starts a task with one running step in DIR and gives it N checkpoints (each with its history
# entry) by copying the first one, as N `checkpoint save`s would have left them (the last 50
# kept). It is written as a version 1 `hook.json` (the whole history inside), which the first
# stop moves to the history store, as an upgrade does. The state is then kept as
# DIR/state.saved, which every timed run starts from.
task_with() {
    local dir="$1" n="$2"
    cp_in "$dir" task start bench --steps work > /dev/null
    cp_in "$dir" step start > /dev/null
    cp_in "$dir" save "first" > /dev/null
    local json
    json="$(ls "$dir"/state/tasks/*/hook.json)"
    python3 - "$json" "$n" <<'PY'
import copy
import json
import sys

path, n = sys.argv[1], int(sys.argv[2])
task = json.load(open(path))
# A young task's recent history is all of it.
history = task.pop("recent_history")
task.pop("history_len", None)
task["schema"] = 1
first = task["checkpoints"][0]
entry = next(h for h in history if h["kind"] == "checkpoint")
task["checkpoints"] = []
for i in range(1, n + 1):
    c = copy.deepcopy(first)
    c["id"], c["message"] = i, f"save {i}"
    task["checkpoints"].append(c)
    h = copy.deepcopy(entry)
    h["detail"] = f"#{i} manual: save {i}"
    history.append(h)
task["checkpoints"] = task["checkpoints"][-50:]
task["history"] = history
task["next_checkpoint"] = n + 1
json.dump(task, open(path, "w"), indent=2)
PY
    rm -rf "$(dirname "$json")/history" "$(dirname "$json")/current.json"
    # One stop first: the test command's outcome is cached, as on a real task's later stops.
    payload "$dir" claude Stop
    (cd "$dir/repo" && CHECKPOINT_STATE_DIR="$dir/state" XDG_CONFIG_HOME="$dir/config" \
        "$bin/checkpoint-claude" < "$dir/claude-Stop.json" > /dev/null)
    snapshot_state "$dir"
}

# Keeps DIR's state, and its checkpoint refs (the store the state caches, in the repository),
# as they are now: every timed run starts from them.
snapshot_state() {
    mkdir -p "$1/state" "$1/repo/.git/refs/checkpoint"
    rm -rf "$1/state.saved" "$1/refs.saved"
    cp -a "$1/state" "$1/state.saved"
    cp -a "$1/repo/.git/refs/checkpoint" "$1/refs.saved"
    # Older than anything a timed run writes, newer than what the copies hold (cp -a keeps
    # their times): `restore` finds what a run changed by it.
    touch "$1/state.stamp"
}

# The command that puts DIR's state and refs back as they were saved: copied back only when the
# last run wrote there (a stop over unchanged work writes nothing; a write, a rename or a removal
# leaves a file or directory newer than the stamp), and synced: deleting and writing megabytes of
# files leaves the kernel busy for milliseconds after, which would be timed with the next run.
restore() {
    local refs="$1/repo/.git/refs/checkpoint"
    echo "[ -z \"\$(find $1/state $refs -newer $1/state.stamp -print -quit)\" ] ||" \
        "{ rm -rf $1/state $refs && cp -a $1/state.saved $1/state && cp -a $1/refs.saved $refs && sync; }"
}

# The command that answers EVENT of AGENT in DIR with its state.
hook() {
    local dir="$1" agent="$2" event="$3"
    # Variables set by the shell, not by env(1): the row times the hook, not one more exec.
    echo "CHECKPOINT_STATE_DIR=$dir/state XDG_CONFIG_HOME=$dir/config {bin}/checkpoint-$agent < $dir/$agent-$event.json"
}

bench_checkpoints() {
    local n dir
    for n in 10 300 1000 10000; do
        dir="$work/checkpoints-$n"
        fixture "$dir"
        payload "$dir" claude PostToolUse
        task_with "$dir" "$n"
        # The timed Stop ends a turn with another reply than the saved state's last stop: its
        # tests are cached green, and it saves its checkpoints (a stop that would save what the
        # last one did saves nothing).
        python3 - "$dir/claude-Stop.json" <<'PY'
import json
import sys

payload = json.load(open(sys.argv[1]))
payload["last_assistant_message"] = "Another turn."
json.dump(payload, open(sys.argv[1], "w"))
PY
        echo "== $n checkpoints: hook.json $(du -h "$dir"/state/tasks/*/hook.json | cut -f1)," \
            "history/ $(du -sh "$dir"/state/tasks/*/history | cut -f1)" >&2
    done
    for event in PostToolUse Stop; do
        for n in 10 300 1000 10000; do
            dir="$work/checkpoints-$n"
            ours "$event, $n checkpoints" "$(restore "$dir")" "$(hook "$dir" claude "$event")"
        done
        run_compare "$event of an active task" "$event, 10 checkpoints" "history-$event"
    done
    for n in 10 300 10000; do
        dir="$work/checkpoints-$n"
        ours "status, $n checkpoints" true \
            "cd $dir/repo && CHECKPOINT_STATE_DIR=$dir/state XDG_CONFIG_HOME=$dir/config {bin}/checkpoint status"
    done
    run_compare "checkpoint status" "status, 10 checkpoints" "history-status"
}

# One Stop of claude in DIR, untimed.
stop_in() {
    (cd "$1/repo" && CHECKPOINT_STATE_DIR="$1/state" XDG_CONFIG_HOME="$1/config" \
        "$bin/checkpoint-claude" < "$1/claude-Stop.json" > /dev/null)
}

# Peak RSS in MiB of one run of the shell COMMAND (after PREPARE).
peak_rss() {
    local prepare="$1" command="$2"
    sh -c "$prepare"
    # The largest resident set of the shell and the hook it starts: the hook's.
    /usr/bin/time -f %M sh -c "$command" 2>&1 > /dev/null | tail -1 |
        awk '{printf "%.1f", $1 / 1024}'
}

bench_changes() {
    local n dir with
    for n in ${CHANGE_SIZES:-1 100 2000 10000}; do
        for with in none task; do
            dir="$work/changes-$n-$with"
            fixture "$dir"
            mkdir -p "$dir/repo/new"
            python3 -c "
import sys
for i in range($n):
    open(f'$dir/repo/new/f{i:05}.py', 'w').write(f'x = {i}\n')
"
            payload "$dir" claude Stop
            payload "$dir" claude PostToolUse
            if [ "$with" = task ]; then
                cp_in "$dir" task start bench --steps work > /dev/null
                cp_in "$dir" step start > /dev/null
                # 50 stops of a task at work: one file edited before each, so each saves its
                # checkpoints (a stop over unchanged work saves none).
                for i in $(seq 50); do
                    echo "x = -$i" > "$dir/repo/new/f00000.py"
                    stop_in "$dir"
                done
            fi
            # The timed stop repeats the last one, with the files' digests remembered (a
            # file's is once it is SETTLED, 2 s old).
            sleep 2.1
            stop_in "$dir"
            snapshot_state "$dir"
            git -C "$dir/repo" status --porcelain > /dev/null
        done
        # git runs after the same state restore as the hooks: a restore leaves the machine
        # slower for a few milliseconds, and the ratio compares the two under one condition.
        plain "git status --porcelain" \
            "git -C $work/changes-$n-none/repo status --porcelain --untracked-files=all" \
            "$(restore "$work/changes-$n-none")"
        for with in none task; do
            dir="$work/changes-$n-$with"
            ours "Stop, $with" "$(restore "$dir")" "$(hook "$dir" claude Stop)"
            ours "PostToolUse, $with" "$(restore "$dir")" "$(hook "$dir" claude PostToolUse)"
        done
        run_compare "$n changed files" "git status --porcelain" "history-changes-$n"
        dir="$work/changes-$n-task"
        local stop post
        stop="$(hook "$dir" claude Stop)"
        post="$(hook "$dir" claude PostToolUse)"
        echo "peak RSS, $n changed files, active task after 50 stops:" \
            "Stop $(peak_rss "$(restore "$dir")" "${stop//\{bin\}/$bin}") MiB," \
            "PostToolUse $(peak_rss "$(restore "$dir")" "${post//\{bin\}/$bin}") MiB"
        echo
    done
}

# A Codex rollout of about MB megabytes of uncompressed JSON lines, compressed with zstd, its
# last token_count at 30 % of the window.
rollout() {
    local mb="$1" out="$work/rollout-$1.jsonl"
    if [ ! -f "$out.zst" ]; then
        python3 - "$mb" "$out" <<'PY'
import json
import sys

mb, out = int(sys.argv[1]), sys.argv[2]
text = "lorem ipsum dolor sit amet " * 36
with open(out, "w") as f:
    written, n = 0, 0
    while written < mb * 1024 * 1024:
        n += 1
        lines = [
            {"type": "response_item", "payload": {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": text}]}},
            {"type": "event_msg", "payload": {"type": "token_count", "info": {
                "last_token_usage": {"input_tokens": 77000 + n % 7},
                "model_context_window": 258400}}},
        ]
        for line in lines:
            s = json.dumps(line) + "\n"
            f.write(s)
            written += len(s)
PY
        zstd -q -f --rm "$out" -o "$out.zst"
    fi
    echo "$out.zst"
}

bench_rollout() {
    local dir="$work/rollout" mb z event memo
    fixture "$dir"
    for mb in 1 100; do
        z="$(rollout "$mb")"
        for event in PreToolUse PreCompact-auto; do
            payload "$dir" codex "$event" "$z"
            mv "$dir/codex-$event.json" "$dir/codex-$event-$mb.json"
        done
        echo "== rollout of $mb MB: $(du -h "$z" | cut -f1) compressed" >&2
    done
    snapshot_state "$dir"
    memo="$dir/state/transcripts.json"
    for mb in 1 100; do
        # Warm: the memo knows the rollout (the run before, or the untimed PreToolUse).
        ours "Codex PreToolUse, $mb MB rollout (zst)" true \
            "$(hook "$dir" codex "PreToolUse-$mb")"
        # A checkpoint saved at compaction: its summary is the rollout's last reply. Cold: the
        # state as saved, without a memo; warm: after a PreToolUse on the same rollout.
        ours "Codex PreCompact, $mb MB rollout (zst), cold" \
            "$(restore "$dir") && rm -f $memo" "$(hook "$dir" codex "PreCompact-auto-$mb")"
        ours "Codex PreCompact, $mb MB rollout (zst), warm" \
            "$(restore "$dir") && $(hook "$dir" codex "PreToolUse-$mb" | sed "s|{bin}|$bin|") > /dev/null" \
            "$(hook "$dir" codex "PreCompact-auto-$mb")"
    done
    run_compare "Codex rollouts" "Codex PreToolUse, 1 MB rollout (zst)" "history-rollout"
}

bench_sessions() {
    local n dir
    for n in 10 1000 10000; do
        dir="$work/sessions-$n"
        fixture "$dir"
        payload "$dir" claude Stop
        # A real session's file (and its lock), copied as N sessions' would be.
        stop_in "$dir"
        python3 - "$dir/state/sessions" "$n" <<'PY'
import os
import shutil
import sys

sessions, n = sys.argv[1], int(sys.argv[2])
(record,) = [f for f in os.listdir(sessions) if f.endswith(".json")]
for i in range(n - 1):
    shutil.copyfile(f"{sessions}/{record}", f"{sessions}/claude-old-{i:05}.json")
    open(f"{sessions}/claude-old-{i:05}.json.lock", "w").close()
PY
        # The timed stop is the first of another session.
        python3 - "$dir/claude-Stop.json" <<'PY'
import json
import sys

payload = json.load(open(sys.argv[1]))
payload["session_id"] = "bench-new-session"
json.dump(payload, open(sys.argv[1], "w"))
PY
        snapshot_state "$dir"
        echo "== $n sessions: $(find "$dir/state/sessions" -type f | wc -l) files" >&2
    done
    for n in 10 1000 10000; do
        dir="$work/sessions-$n"
        # Before each run only the new session's file goes: putting 20,000 files back (as
        # `restore` would) leaves the next process paying for the kernel's work on them. Each
        # run's session checkpoint stays; the continuity log keeps its last 50.
        ours "new session's Stop, $n sessions" \
            "rm -f $dir/state/sessions/claude-bench-new-session.json*" "$(hook "$dir" claude Stop)"
    done
    run_compare "A new session's Stop" "new session's Stop, 10 sessions" "history-sessions"
}

# `du -sb` of DIR in bytes.
bytes() { du -sb "$1" | cut -f1; }

bench_saves() {
    local bins=("$bin") b name dir i n kept start ms slowest before
    if [ -n "${BASELINE_BIN:-}" ]; then
        bins+=("$BASELINE_BIN")
    fi
    echo "| build | saves | loose objects | in packs | .git/objects bytes | beyond the tips' | slowest save ms |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for b in "${bins[@]}"; do
        name="this build"
        [ "$b" = "$bin" ] || name="baseline"
        dir="$work/saves-${name// /-}"
        (
            bin="$b"
            fixture "$dir"
            before="$(bytes "$dir/repo/.git/objects")"
            cp_in "$dir" task start bench --steps work > /dev/null
            cp_in "$dir" step start > /dev/null
            i=0 slowest=0
            for n in 10 100 1000; do
                while [ "$i" -lt "$n" ]; do
                    i=$((i + 1))
                    echo "x = $i" > "$dir/repo/work.py"
                    start="$(date +%s%N)"
                    cp_in "$dir" save "save $i" > /dev/null
                    ms=$((($(date +%s%N) - start) / 1000000))
                    [ "$ms" -le "$slowest" ] || slowest="$ms"
                done
                # What retention keeps: the objects the refs' tips hold, packed.
                kept="$(git -C "$dir/repo" rev-list --objects --no-walk --glob='refs/checkpoint/*' |
                    git -C "$dir/repo" pack-objects -q --stdout | wc -c)"
                git -C "$dir/repo" count-objects -v | awk -v name="$name" -v n="$n" \
                    -v total="$(bytes "$dir/repo/.git/objects")" -v before="$before" \
                    -v kept="$kept" -v slowest="$slowest" '
                    /^count:/ { loose = $2 } /^in-pack:/ { packed = $2 }
                    END { printf "| %s | %d | %d | %d | %d | %d | %d |\n", name, n, loose,
                          packed, total, total - before - kept, slowest }'
            done
        )
    done
}

bench_stale() {
    local dir="$work/stale" past touch_all
    fixture "$dir"
    mkdir -p "$dir/repo/t"
    python3 -c "
for i in range(10000):
    open(f'$dir/repo/t/f{i:05}.txt', 'w').write(f'{i}\n')
"
    git -C "$dir/repo" add t && git -C "$dir/repo" commit -qm files
    payload "$dir" claude Stop
    stop_in "$dir"
    sleep 1.1
    git -C "$dir/repo" status --porcelain > /dev/null
    cp -p "$dir/repo/.git/index" "$dir/index.fresh"
    # Before each timed stop: the index as it was, and every file touched an hour back (a time
    # no index entry holds).
    past="$(($(date +%s) - 3600))"
    touch_all="cp -p $dir/index.fresh $dir/repo/.git/index && find $dir/repo/t -type f -exec touch -d @$past {} +"
    plain "git status --porcelain, fresh index" "git -C $dir/repo status --porcelain" \
        "git -C $dir/repo update-index -q --refresh"
    ours "Stop, fresh index" "git -C $dir/repo update-index -q --refresh" \
        "$(hook "$dir" claude Stop)"
    ours "Stop, first after the touch" "$touch_all" "$(hook "$dir" claude Stop)"
    ours "Stop, second after the touch" \
        "$touch_all && $(hook "$dir" claude Stop | sed "s|{bin}|$bin|") > /dev/null" \
        "$(hook "$dir" claude Stop)"
    run_compare "10,000 touched tracked files" "git status --porcelain, fresh index" "history-stale"
}

# Sourced (bench/report.sh builds its fixtures with these functions): nothing is run.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
    return 0
fi
parts=("$@")
if [ "${#parts[@]}" -eq 0 ]; then
    parts=(checkpoints changes rollout sessions saves stale)
fi
mkdir -p "$work"
build
for part in "${parts[@]}"; do
    "bench_$part"
done
