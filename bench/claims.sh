#!/usr/bin/env bash
# `checkpoint history` over a generated home full of large transcripts, × reading the same bytes
# with `cat` (the floor of any reader that looks at every line), measured in the same hyperfine
# run:
#
#   - CLAUDE Claude Code transcripts of about SIZE_MB MB each, every turn an edit, a pytest run
#     with a 4 KiB result, a reply, and a usage-heavy assistant line as the real ones carry;
#   - CODEX Codex rollouts of the same size, compressed to `.jsonl.zst` (decompressed by the
#     reader; `cat` reads the compressed bytes, so that row's ratio includes decompression).
#
#   bench/claims.sh
#   CLAUDE=50 CODEX=10 SIZE_MB=8 RUNS=5 bench/claims.sh
#
# The home goes under target/bench-repos/claims/ (regenerated when the sizes change). Needs
# hyperfine, python3 and zstd. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

RUNS="${RUNS:-5}"
WARMUP="${WARMUP:-1}"
CLAUDE="${CLAUDE:-40}"
CODEX="${CODEX:-10}"
SIZE_MB="${SIZE_MB:-5}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate
bin="$release/checkpoint"
home="$target/bench-repos/claims/home-$CLAUDE-$CODEX-$SIZE_MB"
if [ ! -d "$home" ]; then
    echo "generating $CLAUDE + $CODEX transcripts of $SIZE_MB MB in $home" >&2
    python3 - "$home.tmp" "$CLAUDE" "$CODEX" "$SIZE_MB" <<'PY'
import json
import os
import sys

home, claude, codex, size_mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
size = size_mb * 1024 * 1024
output = "x" * 4096


def claude_turn(n, session):
    at = f"2026-11-{1 + n // 86400 % 28:02}T{n // 3600 % 24:02}:{n // 60 % 60:02}:{n % 60:02}Z"
    line = lambda kind, content, **more: json.dumps(
        {"type": kind, "isSidechain": False, "sessionId": session, "timestamp": at,
         "uuid": f"u{n}", "message": {"role": kind, "content": content, **more}})
    usage = {"input_tokens": 1200, "cache_creation_input_tokens": 2000,
             "cache_read_input_tokens": 30000, "output_tokens": 5}
    return "\n".join([
        line("user", f"step {n}: fix the next thing"),
        line("assistant", [{"type": "tool_use", "id": f"e{n}", "name": "Edit",
                            "input": {"file_path": "calc.py", "old_string": "a", "new_string": "b"}}],
             model="claude-opus-5-5", usage=usage),
        line("user", [{"type": "tool_result", "tool_use_id": f"e{n}", "content": "ok"}]),
        line("assistant", [{"type": "tool_use", "id": f"t{n}", "name": "Bash",
                            "input": {"command": "python -m pytest -q"}}],
             model="claude-opus-5-5", usage=usage),
        line("user", [{"type": "tool_result", "tool_use_id": f"t{n}", "content": output,
                       "is_error": n % 3 == 0}]),
        line("assistant", [{"type": "text", "text": "Done, the tests pass."}],
             model="claude-opus-5-5", usage=usage),
    ]) + "\n"


def codex_turn(n):
    item = lambda kind, payload: json.dumps(
        {"timestamp": "2026-11-22T02:27:21.000Z", "type": kind, "payload": payload})
    return "\n".join([
        item("event_msg", {"type": "user_message", "message": f"step {n}"}),
        item("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                               "call_id": f"p{n}", "input": "*** Begin Patch\n*** End Patch"}),
        item("response_item", {"type": "function_call", "name": "exec_command", "call_id": f"c{n}",
                               "arguments": json.dumps({"cmd": "cargo test"})}),
        item("response_item", {"type": "function_call_output", "call_id": f"c{n}",
                               "output": "Process exited with code 0\nOutput:\n" + output}),
        item("event_msg", {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": 34800}, "model_context_window": 258400}}),
        item("response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": "Done."}]}),
    ]) + "\n"


def fill(path, first, turn):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(first)
        written, n = len(first), 0
        while written < size:
            text = turn(n)
            f.write(text)
            written += len(text)
            n += 1


for i in range(claude):
    session = f"bench-{i:04}"
    fill(f"{home}/.claude/projects/-bench-p{i % 8}/{session}.jsonl", "",
         lambda n: claude_turn(n, session))
for i in range(codex):
    plain = f"{home}/.codex/sessions/2026/11/22/rollout-2026-11-22T02-27-20-{i:04}.jsonl"
    meta = json.dumps({"timestamp": "2026-11-22T02:27:20.000Z", "type": "session_meta",
                       "payload": {"id": f"codex-{i:04}"}}) + "\n"
    fill(plain, meta, codex_turn)
PY
    # Compressed as Codex does: one frame, the plain file gone.
    find "$home.tmp/.codex" -name '*.jsonl' -exec zstd -q --rm {} +
    mv "$home.tmp" "$home"
fi
bytes="$(du -sb "$home" | cut -f1)"
echo "== $CLAUDE Claude Code transcripts + $CODEX compressed Codex rollouts," \
    "$((bytes / 1024 / 1024)) MiB on disk" >&2

run="cd /tmp && HOME=$home CODEX_HOME= CLAUDE_CONFIG_DIR= XDG_CONFIG_HOME=$home/.config"
row "cat (the same bytes)" "find $home -type f -exec cat {} + > /dev/null"
row "history" "$run $bin history > /dev/null"
row "history --json" "$run $bin history --json > /dev/null"
row "history --agent claude" "$run $bin history --agent claude > /dev/null"
compare "checkpoint history, $((bytes / 1024 / 1024)) MiB of transcripts" \
    "cat (the same bytes)" "claims-$CLAUDE-$CODEX-$SIZE_MB"
(cd /tmp && HOME=$home CODEX_HOME='' CLAUDE_CONFIG_DIR='' "$bin" history | head -9)
