#!/usr/bin/env bash
# Installs the `checkpoint` CLI and the seven agent adapters (checkpoint-claude, checkpoint-gemini,
# checkpoint-codex, checkpoint-copilot, checkpoint-opencode, checkpoint-qwen, checkpoint-droid) into
# cargo's bin directory (~/.cargo/bin), side by side, as `checkpoint install <agent>` expects. One
# release build makes all eight: the workspace's features are resolved once and every shared crate
# is compiled once (eight `cargo install`s built each of them eight times). Shows cargo's progress and the total time.
# Exits 1 when that directory is not on PATH, after saying which line to add: the `checkpoint
# check` the README runs after it would not be found. On Linux the binaries are linked
# statically, for a faster start on every hook call (see scripts/release-build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-build.sh
bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin"
packages=(checkpoint-gate adapter-claude adapter-gemini adapter-codex adapter-copilot adapter-opencode
  adapter-qwen adapter-droid)
binaries=(checkpoint checkpoint-claude checkpoint-gemini checkpoint-codex checkpoint-copilot
  checkpoint-opencode checkpoint-qwen checkpoint-droid)
started=$SECONDS
printf '==> cargo build --release: %s (one build; the first one takes a few minutes)\n' \
  "${binaries[*]}" >&2
release_cargo build --release --locked "${packages[@]/#/--package=}"
target="$(cargo metadata --format-version 1 --no-deps |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
built="$(release_dir "$target")"
mkdir -p "$bin"
for name in "${binaries[@]}"; do
  # A new file renamed over the old one: an agent's hook running the old binary keeps it.
  cp "$built/$name" "$bin/.$name.new"
  mv -f "$bin/.$name.new" "$bin/$name"
done
printf '==> installed %d binaries in %s (%d s)\n' "${#binaries[@]}" "$bin" \
  $((SECONDS - started)) >&2
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
