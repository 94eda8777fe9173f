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

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BASELINE="git status --porcelain"
changes_bin="$release/examples/changes"

measure_git_status() { row "$BASELINE" "git -C '$repo' status --porcelain"; }
measure_cli_backend() { row "checkpoint git backend: cli" "'$changes_bin' cli '$repo'"; }
measure_gix_backend() { row "checkpoint git backend: gix" "'$changes_bin' gix '$repo'"; }
measure_empty_rust() { row "empty Rust binary" "'$empty_bin'"; }
MEASUREMENTS=(measure_git_status measure_cli_backend measure_gix_backend measure_empty_rust)

# Builds the example that reads the change set, and an empty Rust binary, both optimized.
build() {
    release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-engine \
        --example changes
    build_empty
}

# Runs every measurement on one repository and prints means and ratios to the baseline.
bench_repo() {
    local n="$1" repo
    repo="$(repo_with "$n")"
    # Let git refresh the index once, so no run pays for racily-clean entries.
    sleep 1
    git -C "$repo" status --porcelain > /dev/null
    echo "== $n files: $("$changes_bin" cli "$repo") changed paths (cli), $("$changes_bin" gix "$repo") (gix)"
    for measure in "${MEASUREMENTS[@]}"; do
        "$measure"
    done
    compare "$n files" "$BASELINE" "changes-$n" -N
}

sizes=("$@")
if [ "${#sizes[@]}" -eq 0 ]; then
    sizes=(20000 3000)
fi
build
for n in "${sizes[@]}"; do
    bench_repo "$n"
done
