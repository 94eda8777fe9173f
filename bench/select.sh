#!/usr/bin/env bash
# Times a stop after a one-file change on real projects nobody here wrote: `checkpoint check`
# with the affected-test selection (the default) against `checkpoint check --all` (the whole
# suite), both running their tests for real (the test cache is emptied before each run). Then
# the mutation check: a function is broken, and the selected run must fail.
#
#   bench/select.sh [CARGO_WORKSPACE_GIT_URL [REMEDA_GIT_URL]]
#   PROJECTS=remeda bench/select.sh    # only some of boltons, hashes, remeda, starlette, rsa, webob
#   STARLETTE_GIT_URL=/path/to/starlette.git PROJECTS=starlette bench/select.sh   # a copy of a repository
#   BASELINE_BIN=/path/to/old/checkpoint INTERLEAVE=5 bench/select.sh   # before and after
#
# With BASELINE_BIN, that binary (another build of checkpoint, e.g. an older commit's) is
# measured in the same run: rows `check --all (baseline)` and `check (baseline)` beside the
# others in each project's table, and the mutation check with it too. INTERLEAVE (lib.sh) then
# spreads the machine's slow phases over both binaries alike.
#
# The projects, obtained from their own registries or repositories:
# - Python: boltons 26.2.0, its sdist from PyPI (`pytest -x -q`, 32 test modules), pytest in a
#   venv;
# - Rust: RustCrypto/hashes (a virtual workspace of 23 hash crates, `cargo test`), cloned from
#   CARGO_WORKSPACE_GIT_URL (default https://github.com/RustCrypto/hashes); its dependencies come
#   from crates.io.
# - JS/TS: remeda's `packages/remeda` (`npm test` = `vitest`: 175 `*.test.ts` files, with type
#   and property tests beside them), cloned from REMEDA_GIT_URL (default
#   https://github.com/remeda/remeda) at 3b72f9fb, its devDependencies from the npm registry (its
#   npm tarball ships no tests).
# - Python projects that configure pytest (issue 39): Starlette, python-rsa and WebOb, each from
#   its repository at the commit measured, in a venv of its own (lib.sh, `pytest_project`).
#
# Needs hyperfine, python3, cargo and network access on the first run. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS="${RUNS:-5}"
WARMUP=0
hashes_url="${1:-https://github.com/RustCrypto/hashes}"
remeda_url="${2:-https://github.com/remeda/remeda}"
projects=" ${PROJECTS:-boltons hashes remeda starlette rsa webob} "
work="$target/bench-repos/select"
bin="$release/checkpoint"
baseline_bin="${BASELINE_BIN:-}"
if [ -n "$baseline_bin" ]; then baseline_bin="$(realpath "$baseline_bin")"; fi
export XDG_CONFIG_HOME="$work/config"
isolated_git
mkdir -p "$work"

release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate
measured_projects_build_by_default

# The boltons sdist, with pytest in a venv beside it.
boltons="$work/boltons"
if [[ $projects == *" boltons "* && ! -d "$boltons" ]]; then
    tmp="$work/download"
    rm -rf "$tmp" && mkdir -p "$tmp"
    python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$tmp" boltons==26.2.0
    tar -xzf "$tmp"/boltons-26.2.0.tar.gz -C "$tmp"
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet 'pytest>=8'
    mv "$tmp/boltons-26.2.0" "$boltons"
    commit_and_trust "$boltons"
fi

# RustCrypto/hashes at the commit measured.
hashes="$work/hashes"
if [[ $projects == *" hashes "* && ! -d "$hashes" ]]; then
    git clone --quiet "$hashes_url" "$hashes.tmp"
    git -C "$hashes.tmp" checkout --quiet f6c786d7
    rm -rf "$hashes.tmp/.git"
    mv "$hashes.tmp" "$hashes"
    commit_and_trust "$hashes"
fi

# remeda's library package at the commit measured, with its devDependencies.
remeda="$work/remeda"
if [[ $projects == *" remeda "* && ! -d "$remeda" ]]; then
    rm -rf "$remeda.git" "$remeda.tmp"
    git clone --quiet --no-checkout "$remeda_url" "$remeda.git"
    mkdir -p "$remeda.tmp"
    git -C "$remeda.git" archive 3b72f9fb packages/remeda | tar -x -C "$remeda.tmp"
    (cd "$remeda.tmp/packages/remeda" && npm install --no-audit --no-fund --loglevel=error)
    mv "$remeda.tmp/packages/remeda" "$remeda"
    rm -rf "$remeda.git" "$remeda.tmp"
    commit_and_trust "$remeda"
fi

# The projects that configure pytest, each with a venv of its own ($dir.venv).
starlette="$work/starlette" rsa="$work/rsa" webob="$work/webob"
for name in starlette rsa webob; do
    if [[ $projects == *" $name "* ]]; then pytest_project "$name" "$work/$name"; fi
done

export PATH="$work/venv/bin:$PATH"

# The binaries measured, each with the suffix of its rows' names: this checkout's and the
# baseline's, if given.
bins=("$bin")
labels=("")
if [ -n "$baseline_bin" ]; then
    bins+=("$baseline_bin")
    labels+=(" (baseline)")
fi
missed=0

# Times `checkpoint check` against `checkpoint check --all` in $1 after appending a comment to
# the file $2 (the marker $3), with each binary, then breaks it with the sed expression $4 and
# checks that the selected run fails, with each binary.
measure() {
    local repo="$1" file="$2" comment="$3" mutation="$4" name i
    name="$(basename "$repo")"
    [[ $projects == *" $name "* ]] || return 0
    git -C "$repo" checkout --quiet -- .
    for i in "${!bins[@]}"; do # builds and warms everything
        (cd "$repo" && "${bins[i]}" check --all > /dev/null 2>&1 < /dev/null || true)
    done
    printf '%s\n' "$comment" >> "$repo/$file"
    for i in "${!bins[@]}"; do
        echo "check${labels[i]}:"
        (cd "$repo" && "${bins[i]}" check 2>/dev/null < /dev/null | grep -F 'Only the affected' ||
            true)
    done
    local prepare="rm -rf '$repo/.git/checkpoint/cache'"
    for i in "${!bins[@]}"; do
        row "check --all${labels[i]}" \
            "cd '$repo' && '${bins[i]}' check --all > /dev/null 2>&1 < /dev/null || true"
        row "check${labels[i]}" \
            "cd '$repo' && '${bins[i]}' check > /dev/null 2>&1 < /dev/null || true"
    done
    compare "$name: one changed file, tests run" "check --all" "select-$name" --prepare "$prepare"
    sed -i "$mutation" "$repo/$file"
    local out
    for i in "${!bins[@]}"; do
        rm -rf "$repo/.git/checkpoint/cache"
        out="$(cd "$repo" && "${bins[i]}" check 2>/dev/null < /dev/null || true)"
        if grep -q 'Tests: FAILED' <<< "$out" && grep -q 'Only the affected' <<< "$out"; then
            echo "mutation check ($name${labels[i]}): the broken function's tests were" \
                "selected and failed"
        else
            echo "mutation check ($name${labels[i]}): MISSED" >&2
            echo "$out" >&2
            missed=1
        fi
    done
    git -C "$repo" checkout --quiet -- .
}

measure "$boltons" boltons/strutils.py '# touched' \
    's/^def indent(text, margin, newline=.\\n., key=bool):$/&\n    return text/'
measure "$hashes" sha1/src/consts.rs '// touched' 's/0x67452301/0x67452300/'
measure "$remeda" src/clamp.ts '// touched' 's/? min$/? min + 1/'
PYTEST_ADDOPTS="$(pytest_project_addopts starlette)" PATH="$starlette.venv/bin:$PATH" \
    measure "$starlette" starlette/staticfiles.py '# touched' \
    's/if scope\["method"\] not in/if scope["method"] in/'
PATH="$rsa.venv/bin:$PATH" measure "$rsa" rsa/pkcs1_v2.py '# touched' 's/fill_size=4/fill_size=3/'
PATH="$webob.venv/bin:$PATH" measure "$webob" src/webob/dec.py '# touched' \
    's/if len(args) != 1 or kw:/if len(args) != 2 or kw:/'
exit "$missed"
