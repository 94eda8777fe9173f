#!/usr/bin/env bash
# Packages already-built release binaries of checkpoint for one target:
#
#     scripts/package.sh TARGET_TRIPLE BIN_DIR OUT_DIR
#
# BIN_DIR holds the eight binaries (checkpoint and the seven adapters) built for TARGET_TRIPLE, as
# scripts/install.sh builds them (`. scripts/release-build.sh; release_dir TARGET_DIR` names
# where they land). OUT_DIR gets, for the workspace's version:
#
#   checkpoint_gate-VERSION-py3-none-PLATFORM.whl    `pipx install` / `pip install` it
#   checkpoint-gate-VERSION.tgz                      the npm package: a Node launcher per binary
#   checkpoint-gate-OS-CPU[-LIBC]-VERSION.tgz        its platform package, with the binaries;
#                                                    `npm install -g` both tarballs
#   checkpoint-gate-VERSION-TARGET_TRIPLE.tar.gz     the archive the crates' `cargo binstall`
#                                                    metadata names
#
# Each ships LICENSE-MIT and LICENSE-APACHE. The wheel and the archive are assembled by
# scripts/package/assemble.py (Python 3.11+, standard library only), the npm tarballs by
# `npm pack`. Nothing is built or downloaded: binaries for another platform must come from a
# build on (or for) that platform. Tested by .ci/packages.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 TARGET_TRIPLE BIN_DIR OUT_DIR" >&2
  exit 2
fi
target="$1"
bin_dir="$2"
mkdir -p "$3"
out="$(cd "$3" && pwd)"
root="$(cd "$(dirname "$0")/.." && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
python3 "$root/scripts/package/assemble.py" "$target" "$bin_dir" "$out" "$stage" | {
  read -r wheel
  read -r archive
  printf '%s\n%s\n' "$wheel" "$archive"
  while read -r dir; do
    name="$(cd "$dir" && npm pack --ignore-scripts --silent --pack-destination "$out")"
    printf '%s\n' "$out/$name"
  done
}
