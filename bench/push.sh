#!/usr/bin/env bash
# Times pushing checkpoint refs to a local bare remote, against a plain `git push` of one commit
# measured in the same hyperfine run:
#
# 1. `git push` of one new commit (the baseline);
# 2. `checkpoint push` of 200 task refs, one commit each (`refs/checkpoint/tasks/t1..t200`);
# 3. `checkpoint push` of one session ref holding a chain of 200 commits;
# 4. `git push` of one new commit through the `pre-push` hook of `checkpoint install git`, which
#    also records a checkpoint and pushes both of the above (what a user's push costs with it).
#
# Before every run the remote is put back to a copy that has neither the new commit nor our
# refs, so each run pushes everything again.
#
#   bench/push.sh
#
# Needs hyperfine and python3. Not run in CI.
set -euo pipefail
shopt -s inherit_errexit

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
isolated_git

work="$target/bench-repos/push"
export CHECKPOINT_STATE_DIR="$work/state" XDG_CONFIG_HOME="$work/config"
release_cargo build --quiet --release --manifest-path "$root/Cargo.toml" -p checkpoint-gate
bin="$release"

rm -rf "$work"
mkdir -p "$work"
cd "$work"
git init -q -b main --bare base.git
git init -q -b main seed
(cd seed && echo one > file && git add file && git commit -qm one && git push -q ../base.git main)

# A clone of base.git pushing to remote.git, one commit ahead, with refs of ours made by $2:
# `tasks` (200 task refs, one commit each), `chain` (one session ref of 200 commits), `both`.
make_repo() {
    git clone -q base.git "$1"
    (
        cd "$1"
        git remote set-url origin "$work/remote.git"
        echo two > file && git commit -qam two
        empty=$(git hash-object -t tree /dev/null)
        if [ "$2" != chain ]; then
            for i in $(seq 1 200); do
                echo "create refs/checkpoint/tasks/t$i $(git commit-tree -m "task $i" "$empty")"
            done | git update-ref --stdin
        fi
        if [ "$2" != tasks ]; then
            parent=""
            for i in $(seq 1 200); do
                parent=$(git commit-tree -m "session $i" ${parent:+-p "$parent"} "$empty")
            done
            git update-ref refs/checkpoint/sessions/main "$parent"
        fi
    )
}
make_repo tasks tasks
make_repo chain chain
make_repo both both
reset="rm -rf $work/remote.git && cp -a $work/base.git $work/remote.git"

row "git push (one commit)" "cd $work/tasks && git push -q --no-verify origin main"
row "checkpoint push: 200 task refs" "cd $work/tasks && $bin/checkpoint push origin"
row "checkpoint push: 1 session ref of 200 commits" "cd $work/chain && $bin/checkpoint push origin"
compare "push" "git push (one commit)" "push-refs" --prepare "$reset" --output null

# The hook path: installed in the repository, run by a plain `git push`.
(cd both && "$bin/checkpoint" install git > /dev/null)
row "git push (one commit)" "cd $work/both && git push -q --no-verify origin main"
row "git push + pre-push step (both)" "cd $work/both && git push -q origin main"
compare "push through the hook" "git push (one commit)" "push-hook" --prepare "$reset" --output null
