# How release binaries are built, shared by scripts/install.sh and the bench scripts (sourced;
# defines `release_cargo` and `release_dir`).
#
# A hook binary starts on every tool call of an agent, so its start-up is part of the cost of
# each call. On Linux with glibc, a position-dependent executable linked statically starts with
# no dynamic loader, no libraries to map and no relocations to apply: about a third as many page
# faults before `main`, half the start-up time (bench/README.md, "Start-up"). That needs the
# static C library (libc.a, in Debian's libc6-dev; Fedora's glibc-static); without it the build
# is only position-dependent. Elsewhere (macOS, musl, Windows) cargo's defaults stand.
#
# The flags go to the target only (`--target` with the host's triple), not to build scripts or
# proc macros, which cannot be linked statically; binaries then land in
# `<target-dir>/<triple>/release`, which `release_dir` names.
# shellcheck shell=bash

release_triple=""
release_host="$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')" || true
case "$release_host" in
  *-linux-gnu*)
    release_triple="$release_host"
    release_flags="-C relocation-model=static"
    # `cc -print-file-name` echoes the bare name back when it finds no such file.
    if [ "$(cc -print-file-name=libc.a 2>/dev/null)" != libc.a ]; then
      release_flags="$release_flags -C target-feature=+crt-static"
    fi
    release_var="CARGO_TARGET_$(echo "$release_triple" | tr '[:lower:]-' '[:upper:]_')_RUSTFLAGS"
    # Added to any the user set for this target.
    export "$release_var=${!release_var:+${!release_var} }$release_flags"
    ;;
esac

# Runs cargo's subcommand SUB with the release flags: `release_cargo build --release -p …`.
release_cargo() {
  local sub="$1"
  shift
  if [ -n "$release_triple" ]; then
    cargo "$sub" --target "$release_triple" "$@"
  else
    cargo "$sub" "$@"
  fi
}

# The directory of the release binaries under the target directory TARGET_DIR.
release_dir() {
  if [ -n "$release_triple" ]; then
    echo "$1/$release_triple/release"
  else
    echo "$1/release"
  fi
}
