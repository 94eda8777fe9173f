#!/usr/bin/env bash
# Installs the `checkpoint` CLI and the five agent adapters (checkpoint-claude, checkpoint-gemini,
# checkpoint-codex, checkpoint-copilot, checkpoint-opencode) into cargo's bin directory
# (~/.cargo/bin), side by side, as
# `checkpoint install <agent>` expects. Shows cargo's progress (the first release build takes a
# few minutes). Exits 1 when that directory is not on PATH, after saying which line to add: the
# `checkpoint check` the README runs after it would not be found. On Linux the binaries are linked
# statically, for a faster start on every hook call (see scripts/release-build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-build.sh
bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin"
packages=(checkpoint-cli adapter-claude adapter-gemini adapter-codex adapter-copilot adapter-opencode)
step=0
for package in "${packages[@]}"; do
  step=$((step + 1))
  printf '==> [%d/%d] cargo install %s (a release build; the first one takes a few minutes)\n' \
    "$step" "${#packages[@]}" "$package" >&2
  release_cargo install --locked --path "crates/$package"
done
"$bin/checkpoint" --version
shown="${bin/#$HOME/\$HOME}"
case ":$PATH:" in
  *":$bin:"*)
    found="$(command -v checkpoint)"
    if [ "$found" != "$bin/checkpoint" ]; then
      printf 'note: `checkpoint` on your PATH is %s, not the one just installed in %s\n' \
        "$found" "$shown" >&2
    fi
    ;;
  *)
    printf '\ncheckpoint is installed in %s, which is not on your PATH. Add this line to your\n' \
      "$shown" >&2
    printf 'shell profile (~/.bashrc, ~/.zshrc or ~/.profile) and run it in this shell too:\n\n' >&2
    printf '    export PATH="%s:$PATH"\n\n' "$shown" >&2
    printf 'then run `checkpoint check` in a repository.\n' >&2
    exit 1
    ;;
esac
