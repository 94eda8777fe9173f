#!/usr/bin/env bash
# Times what keeping the journal and the continuity log in our refs (refs/checkpoint/…) costs,
# with the `travel` example: each operation alternates between a state directory alone and one
# cached from a ref, in the same process, and the medians are printed with their ratio.
#
#   bench/travel.sh [FILES...]        default: 3000 20000
#
# Each repository is a copy of the cached N-file fixture with its 7 changed paths (so every
# session checkpoint keeps contents). Needs python3 (for lib.sh). Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS="${ROUNDS:-100}"
work="$target/bench-repos/travel"
release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-engine --example travel

sizes=("$@")
[ "${#sizes[@]}" -gt 0 ] || sizes=(3000 20000)
for size in "${sizes[@]}"; do
    dir="$work/repo-$size"
    rm -rf "$dir"
    mkdir -p "$work"
    cp -a "$(repo_with "$size")" "$dir"
    echo "### $size files, $ROUNDS rounds"
    echo
    "$release/examples/travel" "$dir" "$ROUNDS"
    echo
done
