#!/usr/bin/env bash
# Times the context watch that runs at every tool call: `checkpoint-claude` on PreToolUse (and
# PostToolUse, where Claude's watch runs again) in a small repository, with a 1 MB and a 500 MB
# transcript whose last usage is at 30 % (below the warn threshold: the path taken on almost every
# call), against an empty Rust binary. Only the transcript's tail is read, so the sizes should
# cost the same.
#
#   bench/context.sh
#
# The 500 MB transcript is generated once under target/bench-repos/context/. Needs hyperfine and
# python3. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin="$release"
work="$target/bench-repos/context"
export CHECKPOINT_STATE_DIR="$work/state" XDG_CONFIG_HOME="$work/config"

build() {
    release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p adapter-claude
    build_empty
}

# Writes a Claude transcript of about MB megabytes to $work/transcript-MB.jsonl: assistant and
# user lines of ~1 KB, the last assistant usage at 60,000 of 200,000 tokens.
transcript() {
    local mb="$1" out="$work/transcript-$1.jsonl"
    [ -f "$out" ] || python3 - "$mb" "$out" <<'PY'
import json
import sys

mb, out = int(sys.argv[1]), sys.argv[2]
text = "lorem ipsum dolor sit amet " * 36
with open(out + ".tmp", "w") as f:
    written, n = 0, 0
    while written < mb * 1024 * 1024:
        n += 1
        user = {"type": "user", "isSidechain": False,
                "message": {"role": "user", "content": [{"type": "tool_result", "content": text}]}}
        assistant = {"type": "assistant", "isSidechain": False,
                     "message": {"model": "claude-sonnet-5", "role": "assistant",
                                 "content": [{"type": "text", "text": text}],
                                 "usage": {"input_tokens": 1000 + n % 7,
                                           "cache_creation_input_tokens": 0,
                                           "cache_read_input_tokens": 59000}}}
        for line in (user, assistant):
            s = json.dumps(line) + "\n"
            f.write(s)
            written += len(s)
import os
os.replace(out + ".tmp", out)
PY
    echo "$out"
}

# The EVENT payload with `cwd` and `transcript_path` set.
payload() {
    local event="$1" dir="$2" transcript="$3" out="$work/$1-$(basename "$3" .jsonl).json"
    python3 - "$root/tests/payloads/claude/$event.json" "$dir" "$transcript" "$out" <<'PY'
import json
import sys

src, cwd, transcript, out = sys.argv[1:]
payload = json.load(open(src))
payload["cwd"] = cwd
payload["transcript_path"] = transcript
json.dump(payload, open(out, "w"))
PY
    echo "$out"
}

mkdir -p "$work/state" "$work/config"
build
repo="$work/repo"
if [ ! -d "$repo" ]; then
    mkdir -p "$repo"
    (cd "$repo" && bash -eu "$root/tests/fixtures/python-passing.sh" > /dev/null)
fi
small="$(transcript 1)"
large="$(transcript 500)"
ls -l "$small" "$large" >&2
row "empty Rust binary" "'$empty_bin' < '$(payload PreToolUse "$repo" "$small")'"
for event in PreToolUse PostToolUse; do
    row "$event, 1 MB transcript" "'$bin/checkpoint-claude' < '$(payload "$event" "$repo" "$small")'"
    row "$event, 500 MB transcript" "'$bin/checkpoint-claude' < '$(payload "$event" "$repo" "$large")'"
done
compare "context watch per tool call" "empty Rust binary" "context-pre-tool"
