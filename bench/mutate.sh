#!/usr/bin/env bash
# The soundness of the affected-test selection, by mutation, on real projects nobody here
# wrote. For each project, source lines (never test files) are mutated one at a time, in an
# order drawn with SEED (bench/mutate.py: `+`/`-`, `==`/`!=`, `<`/`<=`, `&&`/`||`, true/false,
# an integer constant + 1, a statement deleted). A mutant is kept when the whole suite
# (`checkpoint check --all`) fails on it — one that no longer builds is not kept (a compile error
# is no test's finding), nor one the suite misses — until MUTANTS are kept or ATTEMPTS made. On
# every kept mutant `checkpoint check` (the affected tests only, the default) must fail too: a
# pass is a false green, a test the selection left out that would have caught the change (the
# whole suite is run once more first: a mutant it then passes is flaky, not kept). Both runs are
# timed (wall and CPU, the test cache emptied before each; the mutated file's mtime is bumped
# between them, so a compiled project rebuilds it for both), and so are both on a passing edit
# (a comment added) of each mutated file: the runners stop early on a failure (`pytest -x`,
# `cargo test` at the first failing test binary), so the mutant's times are those of a red stop,
# the passing edit's those of a green one.
#
#   bench/mutate.sh [MACS_GIT_URL [UTILS_GIT_URL]]
#   PROJECTS=pyasn1 bench/mutate.sh       # only some of macs, pyasn1, antfu-utils, starlette, rsa, webob
#   MUTANTS=30 ATTEMPTS=150 SEED=1 bench/mutate.sh
#
# The projects, obtained from their own registries or repositories:
# - Rust: RustCrypto/MACs at e905def3 (a virtual workspace of 6 MAC crates: belt-mac, cbc-mac,
#   cmac, hmac, pmac, retail-mac; `cargo test`, tests against known-answer vectors), cloned from
#   MACS_GIT_URL (default https://github.com/RustCrypto/MACs); its dependencies from crates.io.
#   Mutated: `*/src/**/*.rs` above any `#[cfg(test)]`.
# - Python: pyasn1 0.6.5, its sdist from PyPI (`pytest -x -q`, 19 test modules under `tests/`),
#   pytest in a venv. Mutated: `pyasn1/**/*.py`.
# - JS/TS: antfu/utils at 91f8cf73 (`npm test` = `vitest`, 8 `src/*.test.ts`, each beside the
#   module it tests), cloned from UTILS_GIT_URL (default https://github.com/antfu/utils), its
#   devDependencies from the npm registry. Mutated: `src/*.ts` but the tests.
# - Python projects that configure pytest (issue 39): Starlette, python-rsa and WebOb (lib.sh,
#   `pytest_project`). Mutated: the one file `bench/select.sh` changes in each
#   (`starlette/staticfiles.py`, `rsa/pkcs1_v2.py`, `src/webob/dec.py`), so that every
#   mutant is a change the selection narrows.
#
# Prints one line per mutant tried, then a table row per project; the per-mutant records are
# kept in $target/bench-repos/mutate/<project>.tsv. Needs python3, cargo, node and network
# access on the first run. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

macs_url="${1:-https://github.com/RustCrypto/MACs}"
utils_url="${2:-https://github.com/antfu/utils}"
projects=" ${PROJECTS:-macs pyasn1 antfu-utils starlette rsa webob} "
mutants="${MUTANTS:-30}"
attempts="${ATTEMPTS:-150}"
seed="${SEED:-1}"
work="$target/bench-repos/mutate"
bin="$release/checkpoint"
mutate="$root/bench/mutate.py"
export XDG_CONFIG_HOME="$work/config"
isolated_git
mkdir -p "$work"

release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate
measured_projects_build_by_default

macs="$work/macs"
if [[ $projects == *" macs "* && ! -d "$macs" ]]; then
    from_git "$macs" "$macs_url" e905def3
    mv "$macs.tmp" "$macs"
    commit_and_trust "$macs"
fi

pyasn1="$work/pyasn1"
if [[ $projects == *" pyasn1 "* && ! -d "$pyasn1" ]]; then
    tmp="$work/download"
    rm -rf "$tmp" && mkdir -p "$tmp"
    python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$tmp" pyasn1==0.6.5
    tar --no-same-owner -xzf "$tmp"/pyasn1-0.6.5.tar.gz -C "$tmp"
    mv "$tmp/pyasn1-0.6.5" "$pyasn1"
    rm -rf "$tmp"
    commit_and_trust "$pyasn1"
fi
if [[ $projects == *" pyasn1 "* && ! -d "$work/venv" ]]; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet 'pytest>=8'
fi
export PATH="$work/venv/bin:$PATH"

utils="$work/antfu-utils"
if [[ $projects == *" antfu-utils "* && ! -d "$utils" ]]; then
    from_git "$utils" "$utils_url" 91f8cf73
    (cd "$utils.tmp" && npm install --no-audit --no-fund --loglevel=error --ignore-scripts)
    mv "$utils.tmp" "$utils"
    commit_and_trust "$utils"
fi

for name in starlette rsa webob; do
    if [[ $projects == *" $name "* ]]; then pytest_project "$name" "$work/$name"; fi
done

# Runs `checkpoint check $2` in $1 with the test cache emptied; its output goes to $3 and
# "wall-seconds cpu-seconds" (CPU: user + system of every process it waited for) to $3.time.
timed_check() {
    local repo="$1" flags="$2" out="$3"
    rm -rf "$repo/.git/checkpoint/cache"
    (cd "$repo" && /usr/bin/time -f '%e %U %S' -o "$out.time.raw" \
        "$bin" check ${flags:+"$flags"} < /dev/null > "$out" 2>&1) || true
    tail -n 1 "$out.time.raw" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }' > "$out.time"
}

# Appends a comment line to the file $2 of the project in $1.
comment() {
    if [[ $2 == *.py ]]; then echo '# touched' >> "$1/$2"; else echo '// touched' >> "$1/$2"; fi
}

# "narrowed", or why everything ran, from the output of `checkpoint check` in $1.
selection() {
    if grep -q 'Only the affected' "$1"; then
        echo narrowed
    else
        echo "everything$(sed -n 's/^All the tests ran: */: /p' "$1" | head -n 1)"
    fi
}

# Times `checkpoint check --all` then `checkpoint check` in $1 with the change in $2 made by
# the caller, into $3.all and $3.check; prints their times and the selection, tab-separated.
timed_pair() {
    local repo="$1" file="$2" out="$3"
    timed_check "$repo" --all "$out.all"
    touch "$repo/$file"
    timed_check "$repo" "" "$out.check"
    printf '%s\t%s\t%s\n' "$(tr ' ' '\t' < "$out.all.time")" "$(tr ' ' '\t' < "$out.check.time")" \
        "$(selection "$out.check")"
}

# Mutates the files $4... of the project $1 in $2 until MUTANTS are kept or ATTEMPTS made: a
# mutant whose whole-suite output matches the regular expression $3 does not build. The records
# go to $work/$1.tsv, with, for each kept mutant, the times of both runs on a passing edit of
# the same file (a comment added): what a stop costs when the change is right.
measure() {
    local name="$1" repo="$2" build_error="$3"
    shift 3
    [[ $projects == *" $name "* ]] || return 0
    local records="$work/$name.tsv" out="$work/$name.out" started
    started="$(date +%s)"
    git -C "$repo" checkout --quiet -- .
    # Builds and warms everything: with a comment added, the unmutated suite must pass.
    comment "$repo" "$1"
    timed_check "$repo" --all "$out.all"
    if grep -q 'Tests: FAILED' "$out.all" || ! grep -q 'Tests: ' "$out.all"; then
        echo "$name: the unmutated suite does not pass" >&2
        cat "$out.all" >&2
        exit 1
    fi
    git -C "$repo" checkout --quiet -- .
    python3 "$mutate" list "$seed" "$repo" "$@" > "$work/$name.candidates"
    printf '%s\t' file line op before after verdict all_wall all_cpu check_wall check_cpu \
        selection pass_all_wall pass_all_cpu pass_check_wall pass_check_cpu > "$records"
    printf 'pass_selection\n' >> "$records"
    local kept=0 tried=0 candidate file line op before after verdict times check_time
    local -A passing=()
    while IFS= read -r -u 3 candidate && ((kept < mutants && tried < attempts)); do
        tried=$((tried + 1))
        IFS=$'\t' read -r file line op before after < <(python3 "$mutate" apply "$repo" "$candidate")
        timed_check "$repo" --all "$out.all"
        times="$(tr ' ' '\t' < "$out.all.time")"$'\t-\t-\t-'
        if grep -qE "$build_error" "$out.all"; then
            verdict="does-not-build"
        elif grep -q 'Tests: TIMED OUT' "$out.all"; then
            verdict="timed-out" # an endless loop, most likely: not kept
        elif ! grep -q 'Tests: FAILED' "$out.all"; then
            verdict="survived"
        else
            kept=$((kept + 1))
            touch "$repo/$file"
            timed_check "$repo" "" "$out.check"
            times="$(tr ' ' '\t' < "$out.all.time")"$'\t'"$(tr ' ' '\t' < "$out.check.time")"
            times+=$'\t'"$(selection "$out.check")"
            if grep -q 'Tests: FAILED' "$out.check"; then
                verdict="caught"
            elif timed_check "$repo" --all "$out.again" && ! grep -q 'Tests: FAILED' "$out.again"; then
                verdict="flaky" # the whole suite passes the second time: not kept
                kept=$((kept - 1))
            else
                verdict="FALSE-GREEN"
                cp "$out.check" "$work/$name.false-green.$kept.out"
                echo "FALSE GREEN in $name: $file:$line $before -> $after" >&2
                cat "$out.check" >&2
            fi
        fi
        git -C "$repo" checkout --quiet -- .
        if [[ $verdict == caught || $verdict == FALSE-GREEN ]] && [[ -z ${passing[$file]:-} ]]; then
            comment "$repo" "$file"
            passing[$file]="$(timed_pair "$repo" "$file" "$out.pass")"
            git -C "$repo" checkout --quiet -- .
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$file" "$line" "$op" "$before" "$after" \
            "$verdict" "$times" "${passing[$file]:-$'-\t-\t-\t-\t-'}" >> "$records"
        printf '%s %3d/%d %s:%s %s %s -> %s: %s (%s)\n' "$name" "$kept" "$tried" "$file" "$line" \
            "$op" "$before" "$after" "$verdict" "${times//$'\t'/ }"
    done 3< "$work/$name.candidates"
    echo "$name: $kept kept of $tried tried in $(($(date +%s) - started)) s"
    echo "$(($(date +%s) - started))" > "$work/$name.elapsed"
}

# Sources to mutate: a project's own code, none of its tests.
sources() { (cd "$1" && git ls-files "${@:2}"); }

[[ $projects == *" macs "* ]] && mapfile -t files < <(sources "$macs" '*/src/*.rs') &&
    measure macs "$macs" "error\\[E[0-9]+\\]|could not compile|Couldn't compile the test" "${files[@]}"
# Python candidates that do not compile were left out by mutate.py.
[[ $projects == *" pyasn1 "* ]] && mapfile -t files < <(sources "$pyasn1" 'pyasn1/*.py') &&
    measure pyasn1 "$pyasn1" '^$.' "${files[@]}"
[[ $projects == *" antfu-utils "* ]] &&
    mapfile -t files < <(sources "$utils" 'src/*.ts' ':!*.test.ts' ':!src/index.ts') &&
    measure antfu-utils "$utils" 'Transform failed|Failed to parse|SyntaxError' "${files[@]}"

# Each in its own venv (python_from_git).
for name in starlette:starlette/staticfiles.py rsa:rsa/pkcs1_v2.py webob:src/webob/dec.py; do
    [[ $projects == *" ${name%%:*} "* ]] &&
        PYTEST_ADDOPTS="$(pytest_project_addopts "${name%%:*}")" \
        PATH="$work/${name%%:*}.venv/bin:$PATH" measure "${name%%:*}" "$work/${name%%:*}" '^$.' \
            "${name#*:}"
done

# One row per project: mutants tried and kept, false greens, how many of the kept ones were
# narrowed, and the median ratio of `checkpoint check`'s time to `checkpoint check --all`'s over
# the kept mutants — on the mutant itself (time to the red verdict: pytest -x, cargo test and
# vitest stop early on a failure) and on a passing edit of its file — and the time taken.
python3 - "$work" $projects <<'PY'
import csv
import statistics
import sys

work, names = sys.argv[1], sys.argv[2:]
print("| project | tried | does not build | timed out | survived | flaky | kept | false greens | narrowed | "
      "check/--all on the mutant, wall (CPU) | on a passing edit, wall (CPU) | time |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for name in names:
    try:
        elapsed = int(open(f"{work}/{name}.elapsed").read())
    except FileNotFoundError:
        continue
    rows = list(csv.DictReader(open(f"{work}/{name}.tsv"), delimiter="\t"))
    kept = [r for r in rows if r["verdict"] in ("caught", "FALSE-GREEN")]
    count = lambda verdict: sum(r["verdict"] == verdict for r in rows)
    narrowed = sum(r["selection"] == "narrowed" for r in kept)

    def ratio(prefix, kind):
        if not kept:
            return "-"
        return "%.2f" % statistics.median(
            float(r[f"{prefix}check_{kind}"]) / float(r[f"{prefix}all_{kind}"]) for r in kept)

    print(f"| {name} | {len(rows)} | {count('does-not-build')} | {count('timed-out')} "
          f"| {count('survived')} | {count('flaky')} "
          f"| {len(kept)} | {count('FALSE-GREEN')} | {narrowed} of {len(kept)} "
          f"| {ratio('', 'wall')} ({ratio('', 'cpu')}) "
          f"| {ratio('pass_', 'wall')} ({ratio('pass_', 'cpu')}) "
          f"| {round(elapsed / 60)} min |")
PY
