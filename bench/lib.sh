# Shared by the bench scripts: paths, the empty-binary floor, cached large repositories, and a
# hyperfine run that prints each mean with its ratio to a baseline measured in the same run.
# shellcheck shell=bash

RUNS="${RUNS:-30}"
WARMUP="${WARMUP:-5}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
empty_bin="$target/bench-bin/empty"
# The release binaries, built as scripts/install.sh builds them (`release_cargo build --release`).
. "$root/scripts/release-build.sh"
release="$(release_dir "$target")"

# Compiles an empty `fn main() {}` with full optimization: the process floor.
build_empty() {
    mkdir -p "$(dirname "$empty_bin")"
    echo 'fn main() {}' > "$empty_bin.rs"
    rustc --edition 2024 -C opt-level=3 -C strip=symbols -o "$empty_bin" "$empty_bin.rs"
}

# Prints the path of the cached N-file repository (with 7 changed paths), generating it on
# first use with tests/fixtures/large-repo.sh.
repo_with() {
    local n="$1" dir="$target/bench-repos/large-$1"
    if [ ! -d "$dir" ]; then
        echo "generating a $n-file repository in $dir" >&2
        local tmp="$dir.tmp"
        rm -rf "$tmp"
        mkdir -p "$tmp"
        (
            cd "$tmp"
            export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
            export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.com
            export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com
            bash -eu "$root/tests/fixtures/large-repo.sh" "$n" >&2
        )
        mv "$tmp" "$dir"
    fi
    echo "$dir"
}

# Makes git independent of the user's config, with a fixed author, for the repositories a bench
# script commits.
isolated_git() {
    export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
    export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.com
    export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com
}

# Appends one named command to the next `compare` run.
row() { hyperfine_args+=(--command-name "$1" "$2"); }

# Runs the rows collected with `row` (then clears them) and prints a table of means, medians and
# CPU (user + system time of the process tree) and their ratios to the row named BASELINE's.
# Extra arguments go to hyperfine (e.g. -N for no shell). With INTERLEAVE=K (default 1) the RUNS
# are made in K rounds of RUNS/K runs of every row in turn, and pooled: on a shared machine a slow
# phase then falls on every row alike, where one hyperfine run times each row's runs back to back
# and a phase decides whole rows.
compare() {
    local title="$1" baseline="$2" json="$target/bench-repos/$3.json"
    shift 3
    mkdir -p "$(dirname "$json")"
    local rounds="${INTERLEAVE:-1}" round jsons=()
    for round in $(seq "$rounds"); do
        hyperfine "$@" --style basic --warmup "$WARMUP" \
            --runs "$(((RUNS + rounds - 1) / rounds))" \
            --export-json "$json.$round" "${hyperfine_args[@]}" > /dev/null
        jsons+=("$json.$round")
    done
    hyperfine_args=()
    python3 - "$json" "$baseline" "$title" "${jsons[@]}" <<'PY'
import json
import statistics
import sys

path, baseline_name, title, *rounds = sys.argv[1:]
pooled, cpu = {}, {}
for round_path in rounds:
    for r in json.load(open(round_path))["results"]:
        pooled.setdefault(r["command"], []).extend(r["times"])
        # hyperfine gives the mean user and system time of the process tree per round.
        cpu.setdefault(r["command"], []).append(((r["user"] + r["system"]), len(r["times"])))
results = [
    {
        "command": command,
        "times": times,
        "mean": statistics.mean(times),
        "stddev": statistics.stdev(times) if len(times) > 1 else 0.0,
        "median": statistics.median(times),
        "min": min(times),
        "cpu": sum(c * n for c, n in cpu[command]) / sum(n for _, n in cpu[command]),
    }
    for command, times in pooled.items()
]
json.dump({"results": results}, open(path, "w"))
baseline = next(r for r in results if r["command"] == baseline_name)
print(f"| {title} | mean ms | ± ms | median ms | min ms | CPU ms | mean × | median × | "
      f"CPU × `{baseline_name}` |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in results:
    ms = [r[k] * 1e3 for k in ("mean", "stddev", "median", "min", "cpu")]
    ratios = [r[k] / baseline[k] if baseline[k] else float("nan") for k in ("mean", "median", "cpu")]
    print(f"| {r['command']} | {ms[0]:.1f} | {ms[1]:.1f} | {ms[2]:.1f} | {ms[3]:.1f} | {ms[4]:.1f} "
          f"| {ratios[0]:.2f} | {ratios[1]:.2f} | {ratios[2]:.2f} |")
print()
PY
    rm -f "${jsons[@]}"
}
hyperfine_args=()

# After the release build: the projects a script measures build as cargo would by default, in
# their own target directories (where `checkpoint` reads cargo's dep-info) and without the
# release binaries' static linking flags (a position-dependent doctest fails to link).
measured_projects_build_by_default() {
    unset CARGO_TARGET_DIR
    if [ -n "${release_var:-}" ]; then unset "$release_var"; fi
}

# Commits the directory $1 (a project a script measures) as it is, ignoring build and tool
# output, and approves its detected test command with the binary $bin.
commit_and_trust() {
    (
        cd "$1"
        git init -q -b main
        printf '%s\n' '/target' '__pycache__/' '*.pyc' '.venv/' '.pytest_cache/' 'node_modules/' \
            '*.egg-info/' '.coverage' >> .gitignore
        git add -A
        git commit -q -m "upstream sources"
        "$bin" trust --yes > /dev/null < /dev/null
    )
}

# Extracts the commit $3 of the repository at URL $2 into the directory $1.tmp.
from_git() {
    local dir="$1" url="$2" commit="$3"
    rm -rf "$dir.git" "$dir.tmp"
    git clone --quiet --no-checkout "$url" "$dir.git"
    mkdir -p "$dir.tmp"
    git -C "$dir.git" archive "$commit" | tar --no-same-owner -x -C "$dir.tmp"
    rm -rf "$dir.git"
}

# Makes the directory $1 (unless it is there, committed) a Python project to measure: the commit
# $3 of the repository at URL $2, with a venv of its own beside it ($1.venv: its test command
# runs from there) holding the project installed editable with the extras $4 (comma-separated,
# or empty) and the pip requirements $5...; then
# commits it and approves its detected test command with that venv first on PATH, as the
# measurements run it (`PATH="$1.venv/bin:$PATH" measure ...`).
python_from_git() {
    local dir="$1" url="$2" commit="$3" extras="$4"
    shift 4
    if [ -d "$dir/.git" ]; then return 0; fi
    rm -rf "$dir" "$dir.venv"
    from_git "$dir" "$url" "$commit"
    mv "$dir.tmp" "$dir"
    python3 -m venv "$dir.venv"
    # setuptools-scm and hatch-vcs read the version from git, which the extract has not.
    SETUPTOOLS_SCM_PRETEND_VERSION=0+bench "$dir.venv/bin/pip" install --quiet \
        --disable-pip-version-check -e "$dir${extras:+[$extras]}" "$@"
    PATH="$dir.venv/bin:$PATH" commit_and_trust "$dir"
}

# Makes the directory $2 the Python project named $1 (python_from_git), one of those that
# configure pytest (issue 39): Starlette `cb8f84f5` (`addopts = "-rXs --strict-config
# --strict-markers"`), python-rsa `42b0e14f` (`tox.ini` `addopts = -v --cov rsa …`), WebOb
# `98770ea9` (`testpaths`, `python_files`, `addopts = -W always --cov …`), from
# STARLETTE_GIT_URL, RSA_GIT_URL or WEBOB_GIT_URL (their GitHub repositories by default), their
# test requirements from PyPI (anyio pinned to one of Starlette's time: later ones warn of a
# deprecation its tests make an error; mypy to one that still checks for Python 3.8, as
# python-rsa's `setup.cfg` asks of its `test_mypy.py`).
pytest_project() {
    case "$1" in
    starlette)
        python_from_git "$2" "${STARLETTE_GIT_URL:-https://github.com/encode/starlette}" \
            cb8f84f5 full 'pytest>=8.4' trio 'anyio==4.9.0'
        ;;
    rsa)
        python_from_git "$2" "${RSA_GIT_URL:-https://github.com/sybrenstuvel/python-rsa}" \
            42b0e14f '' 'pytest>=8' pytest-cov 'mypy==1.10.1'
        ;;
    webob)
        python_from_git "$2" "${WEBOB_GIT_URL:-https://github.com/Pylons/webob}" 98770ea9 testing
        ;;
    esac
}

# What each of those projects' test runs get in PYTEST_ADDOPTS: Starlette's test of a directory
# without read permission expects a 401, which root gets past.
pytest_project_addopts() {
    case "$1" in
    starlette)
        echo '--deselect tests/test_staticfiles.py::test_staticfiles_with_invalid_dir_permissions_returns_401'
        ;;
    esac
}
