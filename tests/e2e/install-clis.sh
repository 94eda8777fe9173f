#!/usr/bin/env bash
# Installs the pinned agent CLIs the end-to-end tests drive, from the npm registry, into a cache
# folder, one npm prefix per CLI. Idempotent: a CLI whose prefix already holds the pinned version
# (and answers `--version`) is left alone.
#
# Usage: install-clis.sh            (cache: ${CHECKPOINT_E2E_CACHE:-$HOME/.cache/checkpoint-e2e})
# Prints, on stdout and nothing else, one `<agent>=<absolute binary path>` line per CLI:
#   claude=…  gemini=…  codex=…  copilot=…  opencode=…  qwen=…  droid=…
# npm's own output goes to stderr. Exits non-zero, naming the CLI, when an install or the
# `--version` check fails.
set -euo pipefail

CACHE="${CHECKPOINT_E2E_CACHE:-${HOME:?HOME is not set}/.cache/checkpoint-e2e}"

CLAUDE_VERSION=2.1.330
GEMINI_VERSION=0.61.0
CODEX_VERSION=0.169.0
COPILOT_VERSION=1.0.102
OPENCODE_VERSION=1.18.33
QWEN_VERSION=0.24.4
DROID_VERSION=0.225.2

log() { printf 'install-clis: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v npm >/dev/null || die "npm is not on PATH (Node.js >= 20 is required)"
command -v node >/dev/null || die "node is not on PATH (Node.js >= 20 is required)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "Node.js >= 20 is required, found $(node --version)"

mkdir -p "$CACHE"

# ensure NAME VERSION BIN PACKAGE...
#   Installs PACKAGE... into $CACHE/NAME-VERSION unless its stamp says it is already there, checks
#   that `BIN --version` prints VERSION, and prints NAME=<bin path>.
ensure() {
    local name="$1" version="$2" bin_rel="$3"
    shift 3
    local prefix="$CACHE/$name-$version"
    local bin="$prefix/$bin_rel"
    local stamp="$prefix/.checkpoint-e2e-installed"
    local out

    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$*" ] || [ ! -x "$bin" ]; then
        log "installing $* into $prefix"
        rm -rf "$prefix"
        mkdir -p "$prefix"
        # --ignore-scripts=false: Claude Code's postinstall puts its native binary in place.
        if ! npm install --prefix "$prefix" --no-audit --no-fund --no-save --no-package-lock \
            --ignore-scripts=false --loglevel=warn "$@" >&2; then
            die "npm install of $* failed"
        fi
        [ -x "$bin" ] || die "$name: $bin is missing after npm install"
        printf '%s' "$*" >"$stamp"
    fi

    # HOME points at a scratch dir so that `--version` cannot touch the user's real config.
    local scratch
    scratch="$(mktemp -d)"
    # Copilot CLI's launcher unpacks its package under $XDG_CACHE_HOME/copilot on first use: into
    # the prefix, where the tests point XDG_CACHE_HOME, so that no test run unpacks it again.
    if ! out="$(cd "$scratch" && HOME="$scratch" XDG_CACHE_HOME="$prefix/xdg-cache" \
        timeout 120 "$bin" --version </dev/null 2>&1)"; then
        rm -rf "$scratch"
        rm -f "$stamp"
        die "$name: '$bin --version' failed: $out"
    fi
    rm -rf "$scratch"
    case "$out" in
        *"$version"*) ;;
        *) rm -f "$stamp"; die "$name: '$bin --version' printed '$out', expected $version" ;;
    esac
    log "$name $version ok"
    printf '%s=%s\n' "$name" "$bin"
}

ensure claude "$CLAUDE_VERSION" node_modules/.bin/claude \
    "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@anthropic-ai/claude-code-linux-x64@$CLAUDE_VERSION"
ensure gemini "$GEMINI_VERSION" node_modules/.bin/gemini "@google/gemini-cli@$GEMINI_VERSION"
ensure codex "$CODEX_VERSION" node_modules/.bin/codex "@openai/codex@$CODEX_VERSION"
ensure copilot "$COPILOT_VERSION" node_modules/.bin/copilot "@github/copilot@$COPILOT_VERSION"
# OpenCode's postinstall puts the native binary for this platform in place of its launcher.
ensure opencode "$OPENCODE_VERSION" node_modules/.bin/opencode "opencode-ai@$OPENCODE_VERSION"
# Qwen Code asks for Node.js >= 22 (npm warns, EBADENGINE); 0.24.4 ran every test here on 20.
ensure qwen "$QWEN_VERSION" node_modules/.bin/qwen "@qwen-code/qwen-code@$QWEN_VERSION"
# Factory Droid: the Linux x64 build itself (a native binary). `@factory/cli` is only a launcher
# that picks it among its optional dependencies; the registry this was pinned on had no launcher of
# the same version.
ensure droid "$DROID_VERSION" node_modules/@factory/cli-linux-x64/bin/droid \
    "@factory/cli-linux-x64@$DROID_VERSION"
