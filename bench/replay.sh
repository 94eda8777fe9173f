#!/usr/bin/env bash
# Replays real history through the check of the tests as they were, on the new code (issue 32):
# for each commit C of a public project that changes a test file, runner configuration or
# conftest.py, a clone is checked out at C and `checkpoint check --base C^` judges the commit as
# one agent turn (commit gate off; the test command given in the user config, so nothing
# untracked is added to the change set; a fresh state directory per commit). Each commit is
# classified: allowed, blocked because the old tests fail on the new code, blocked by another
# finding (the line analysis), or skipped (its own tests fail, or the check took over 240 s; each
# test run is bounded at 60 s by `[tests] timeout`). On a block by the old tests, they also run
# on the parent commit itself: where they fail there too, the commit did not make them fail.
# Results go to WORK/PROJECT.jsonl (a rerun resumes) and a markdown table to stdout; every block
# is listed, to be read by hand.
#
#   bench/replay.sh [PROJECT...]     default: more-itertools pflag marked marked-2012
#                                    (also pflag-vet; the projects are listed in replay.py)
#
#   CHECKPOINT_BIN   the binary to judge with (default: target/debug/checkpoint; not built here)
#   LIMIT            newest commits replayed per project (default 120)
#   WORK             where clones and results go (default: /tmp/checkpoint-replay)
#   MIRRORS          a directory of bare mirrors OWNER+NAME/repo to clone from instead of GitHub
#
# Needs git, python3, go and node; the projects need nothing installed: more-itertools runs
# `python3 -m unittest -q`, spf13/pflag `go test -vet=off ./...` with GOPROXY=off, marked its
# dependency-free `node test`.
# Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${CHECKPOINT_BIN:-$here/../target/debug/checkpoint}"
work="${WORK:-/tmp/checkpoint-replay}"
limit="${LIMIT:-120}"
projects=("$@")
[ ${#projects[@]} -gt 0 ] || projects=(more-itertools pflag marked marked-2012)

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com

mkdir -p "$work"
for project in "${projects[@]}"; do
    python3 "$here/replay.py" run "$project" "$work" "$bin" "$limit"
done
python3 "$here/replay.py" table "$work" "${projects[@]}"
