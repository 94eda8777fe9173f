#!/usr/bin/env bash
# Times reading the change set of a large repository: `git status --porcelain` (the baseline),
# checkpoint's CLI and gitoxide backends, and an empty Rust binary (the process floor).
#
#   bench/changes.sh [FILES...]        default: 20000 3000
#
# Repositories come from tests/fixtures/large-repo.sh and are cached under
# <target>/bench-repos/. Needs hyperfine (`apt-get install hyperfine`) and python3. Not run in CI.
#
# To add a row, write a `measure_*` function that calls `row NAME COMMAND` (COMMAND is split into
# words by hyperfine, no shell; `$repo` is the repository being measured) and append it to
# MEASUREMENTS.
set -euo pipefail
shopt -s inherit_errexit

RUNS="${RUNS:-30}"
WARMUP="${WARMUP:-5}"
BASELINE="git status --porcelain"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
changes_bin="$target/release/examples/changes"
empty_bin="$target/bench-bin/empty"

measure_git_status() { row "$BASELINE" "git -C '$repo' status --porcelain"; }
measure_cli_backend() { row "checkpoint git backend: cli" "'$changes_bin' cli '$repo'"; }
measure_gix_backend() { row "checkpoint git backend: gix" "'$changes_bin' gix '$repo'"; }
measure_empty_rust() { row "empty Rust binary" "'$empty_bin'"; }
MEASUREMENTS=(measure_git_status measure_cli_backend measure_gix_backend measure_empty_rust)

# Appends one named command to the hyperfine arguments.
row() { hyperfine_args+=(--command-name "$1" "$2"); }

# Builds the example that reads the change set, and an empty Rust binary, both optimized.
build() {
    cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-core \
        --example changes
    mkdir -p "$(dirname "$empty_bin")"
    echo 'fn main() {}' > "$empty_bin.rs"
    rustc --edition 2024 -C opt-level=3 -C strip=symbols -o "$empty_bin" "$empty_bin.rs"
}

# Prints the path of the cached N-file repository, generating it on first use.
repo_with() {
    local n="$1" dir="$target/bench-repos/large-$1"
    if [ ! -d "$dir" ]; then
        echo "generating a $n-file repository in $dir" >&2
        local tmp="$dir.tmp"
        rm -rf "$tmp"
        mkdir -p "$tmp"
        (
            cd "$tmp"
            export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
            export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.com
            export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com
            bash -eu "$root/tests/fixtures/large-repo.sh" "$n" >&2
        )
        mv "$tmp" "$dir"
    fi
    echo "$dir"
}

# Runs every measurement on one repository and prints means and ratios to the baseline.
bench_repo() {
    local n="$1" repo json
    repo="$(repo_with "$n")"
    # Let git refresh the index once, so no run pays for racily-clean entries.
    sleep 1
    git -C "$repo" status --porcelain > /dev/null
    echo "== $n files: $("$changes_bin" cli "$repo") changed paths (cli), $("$changes_bin" gix "$repo") (gix)"
    hyperfine_args=()
    for measure in "${MEASUREMENTS[@]}"; do
        "$measure"
    done
    json="$target/bench-repos/changes-$n.json"
    hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" \
        "${hyperfine_args[@]}" > /dev/null
    python3 - "$json" "$BASELINE" "$n" <<'PY'
import json
import sys

path, baseline_name, n = sys.argv[1:]
results = json.load(open(path))["results"]
baseline = next(r["mean"] for r in results if r["command"] == baseline_name)
print(f"| {n} files | mean ms | ± ms | min ms | mean × `{baseline_name}` |")
print("|---|---:|---:|---:|---:|")
for r in results:
    ms = [r[k] * 1e3 for k in ("mean", "stddev", "min")]
    print(f"| {r['command']} | {ms[0]:.1f} | {ms[1]:.1f} | {ms[2]:.1f} | {r['mean'] / baseline:.2f} |")
print()
PY
}

sizes=("$@")
if [ "${#sizes[@]}" -eq 0 ]; then
    sizes=(20000 3000)
fi
build
for n in "${sizes[@]}"; do
    bench_repo "$n"
done
