#!/usr/bin/env bash
# Installs the `checkpoint` CLI and the three agent adapters (checkpoint-claude, checkpoint-gemini,
# checkpoint-codex) into cargo's bin directory (~/.cargo/bin), side by side, as
# `checkpoint install <agent>` expects.
set -euo pipefail
cd "$(dirname "$0")/.."
for package in checkpoint-cli adapter-claude adapter-gemini adapter-codex; do
  cargo install --locked --quiet --path "crates/$package"
done
checkpoint --version
