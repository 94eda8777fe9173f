"""Replays commits of public projects through `checkpoint check --base PARENT` (see replay.sh).

    replay.py run PROJECT WORK BIN LIMIT     replay, appending to WORK/PROJECT.jsonl (resumable)
    replay.py table WORK PROJECT...          the summary table and every old-tests block, markdown
"""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

# Each project: where it comes from, the test command the gate is given (in the user config),
# the newest commit date replayed (before it the code runs on today's toolchains, or the tests are
# fast: more-itertools' suite took 10 s of CPU by 2024-12, 1 s in 2024-06), and the environment
# the command needs.
PROJECTS = {
    "more-itertools": {
        "repo": "more-itertools/more-itertools",
        "lang": "Python",
        "command": "python3 -m unittest -q",
        "until": "2024-06-30",
        "env": {},
    },
    "pflag": {
        "repo": "spf13/pflag",
        "lang": "Go",
        # Without vet: go 1.19's vet rejects most test files older than its checks (`go test`
        # runs it), which would skip those commits. `pflag-vet` replays with it.
        "command": "go test -vet=off ./...",
        "until": None,
        # The clone sits at $GOPATH/src/github.com/spf13/pflag, so commits from before go.mod
        # (2019) build in GOPATH mode; GOPROXY=off: nothing is downloaded.
        "env": {"GO111MODULE": "auto", "GOPROXY": "off", "GOFLAGS": "-mod=mod"},
        "clone_at": "gopath/src/github.com/spf13/pflag",
    },
    "pflag-vet": {},
    "marked": {
        "repo": "markedjs/marked",
        "lang": "JavaScript",
        # `npm test` was `node test` until 2017: a runner with no dependencies, which exits
        # non-zero on a failure since 2013-08-04 (`marked-2012` replays the commits before).
        "command": "node test",
        "since": "2013-08-04",
        "until": "2017-12-31",
        "env": {},
        # Before 2013-08 the runner did `require('marked')`: NODE_PATH holds a link `marked` to
        # the clone.
        "node_path": "marked",
    },
}

# The commits of marked before its runner's exit status meant anything: the command fails when
# a test does.
PROJECTS["marked-2012"] = dict(
    PROJECTS["marked"], since=None, until="2013-08-03",
    command="node test | awk '{ print } / failed/ { f = 1 } END { exit f }'")

PROJECTS["pflag-vet"] = dict(PROJECTS["pflag"], command="go test ./...")

OLD_PREFIX = "old-tests: "
NEW_PREFIX = "old-tests, new side: "
HARD_TIMEOUT = 240  # seconds for one `checkpoint check` (three runs of a 60 s command at most)
RUNNER_CONFIG = ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "package.json")


def is_test(path):
    """The gate's default test files (checkpoint_core::integrity::files::is_default_test)."""
    dirs, _, name = path.rpartition("/")
    previous = None
    for d in dirs.split("/") if dirs else []:
        if d in ("tests", "__tests__") or (previous == "src" and d == "test"):
            return True
        previous = d
    parts = name.split(".")[1:]
    inner = any(p in ("test", "spec") for p in parts[:-1])
    java = name.endswith(".java") and name[:-5].endswith(("Test", "Tests", "IT"))
    return (inner or java or (name.startswith("test_") and name.endswith(".py"))
            or name.endswith("_test.py") or name.endswith("_test.go"))


def is_restored(path):
    """What the check puts back as it was (old_tests.rs `is_restored`)."""
    name = path.rsplit("/", 1)[-1]
    if name in ("Cargo.toml", "Cargo.lock"):
        return False
    return (is_test(path) or name in RUNNER_CONFIG or name == "conftest.py"
            or name.startswith(("jest.config.", "vitest.config.")))


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def commits(repo, since, until, limit):
    """Non-merge commits with one parent that change a file the check restores, newest first."""
    # From the default branch, not HEAD: the clone is left at the last commit replayed.
    args = ["log", "--no-merges", "--format=@%H %P", "--name-only", "origin/HEAD"]
    if since:
        args.append(f"--since={since}")
    if until:
        args.append(f"--until={until}")
    picked, current = [], None
    for line in git(repo, *args).splitlines() + ["@"]:
        if line.startswith("@"):
            if current and len(current[1]) == 1 and any(map(is_restored, current[2])):
                picked.append((current[0], current[1][0]))
            fields = line[1:].split()
            current = (fields[0], fields[1:], []) if fields else None
        elif line and current:
            current[2].append(line)
    return picked[:limit]


def run_group(argv, cwd, env, timeout):
    """(exit status or None on a timeout, stdout, stderr) of `argv`, run in its own process
    group so that a timeout kills what it started too."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        return proc.returncode, stdout, stderr
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, "", "timed out"


def cache_entries(state):
    """The state directory's test cache: command → outcome."""
    out = {}
    for f in (state / "cache").glob("*.json"):
        try:
            entry = json.loads(f.read_text())
            out[entry["command"]] = entry["outcome"]
        except (ValueError, KeyError):
            pass
    return out


def run(project, work, binary, limit):
    spec = PROJECTS[project]
    work = pathlib.Path(work) / project
    clone = work / spec.get("clone_at", "clone")
    mirror = pathlib.Path(os.environ.get("MIRRORS", "/nonexistent")) / (
        spec["repo"].replace("/", "+")) / "repo"
    if not clone.exists():
        source = str(mirror) if mirror.exists() else f"https://github.com/{spec['repo']}"
        clone.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", source, str(clone)], check=True)
    config = work / "config"
    (config / "checkpoint").mkdir(parents=True, exist_ok=True)
    (config / "checkpoint" / "config.toml").write_text(
        f'[tests]\ncommand = "{spec["command"]}"\ntimeout = "60s"\n\n'
        "[stop]\ncommit_gate = false\n")
    env = dict(os.environ, XDG_CONFIG_HOME=str(config), **spec["env"])
    if "clone_at" in spec:
        env["GOPATH"] = str(work / "gopath")
    if spec.get("node_path"):
        link = work / "node_path" / spec["node_path"]
        link.parent.mkdir(exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(clone)
        env["NODE_PATH"] = str(link.parent)
    results = work.parent / f"{project}.jsonl"
    done = set()
    if results.exists():
        # Records of an earlier version of this script: the run on the base added.
        records = [json.loads(line) for line in results.read_text().splitlines()]
        done = {r["commit"] for r in records}
        for r in records:
            r.setdefault("commands", [OLD_PREFIX + spec["command"]] if r["old"] else [])
            if r["class"] == "blocked: old tests fail" and "base" not in r:
                r["base"] = at_base(clone, r, env)
        results.write_text("".join(json.dumps(r) + "\n" for r in records))
    todo = [c for c in commits(clone, spec.get("since"), spec["until"], limit) if c[0] not in done]
    print(f"{project}: {len(todo)} commits to replay ({len(done)} done)", file=sys.stderr)
    for n, (commit, parent) in enumerate(todo, 1):
        git(clone, "checkout", "-qf", "--detach", commit)
        git(clone, "clean", "-qffdx")
        state = work / "state" / commit[:12]
        shutil.rmtree(state, ignore_errors=True)
        env["CHECKPOINT_STATE_DIR"] = str(state)
        started = time.monotonic()
        rc, stdout, stderr = run_group([binary, "check", "--base", parent], clone, env,
                                       HARD_TIMEOUT)
        seconds = round(time.monotonic() - started, 1)
        # A killed check leaves its scratch worktree behind, registered in the clone.
        for line in git(clone, "worktree", "list", "--porcelain").splitlines():
            if line.startswith("worktree ") and "/checkpoint-scratch-" in line:
                git(clone, "worktree", "remove", "--force", line[len("worktree "):])
        # Test selection may narrow the command (`python3 -m unittest -q tests.test_more`), so
        # the cache entries are told apart by their prefixes.
        cache = cache_entries(state)
        pick = lambda prefix: next((o for c, o in sorted(cache.items()) if c.startswith(prefix)),
                                   None)
        new = next((o for c, o in sorted(cache.items()) if not c.startswith("old-tests")), None)
        old, new_there = pick(OLD_PREFIX), pick(NEW_PREFIX)
        record = {
            "commit": commit, "parent": parent, "rc": rc, "seconds": seconds,
            "subject": git(clone, "log", "-1", "--format=%s", commit).strip(),
            "changed": git(clone, "diff", "--name-status", parent, commit).splitlines(),
            "stdout": stdout, "stderr": stderr[-2000:],
            "commands": sorted(cache),
            "new": new and {k: new[k] for k in ("status", "passed", "failed", "error")},
            "old": old and {k: old[k] for k in ("status", "passed", "failed", "failing",
                                                 "tail", "error")},
            "new_in_scratch": new_there and {k: new_there[k] for k in ("status", "error")},
        }
        record["class"] = classify(record)
        if record["class"] == "blocked: old tests fail":
            record["base"] = at_base(clone, record, env)
        with results.open("a") as out:
            out.write(json.dumps(record) + "\n")
        print(f"{project} {n}/{len(todo)} {commit[:10]} {seconds:6.1f}s {record['class']}",
              file=sys.stderr)
        shutil.rmtree(state, ignore_errors=True)


# A failing test's name in a runner's output: unittest, `go test -v`/plain, marked's runner.
FAILED = re.compile(r"^(?:FAIL|ERROR): \S+ \((\S+?)\)|^\s*--- FAIL: (\S+)|^#\d+\. (\S+) failed",
                    re.M)


def failing_names(text):
    return {next(g for g in m.groups() if g) for m in FAILED.finditer(text or "")}


def at_base(clone, record, env):
    """Runs the command the old tests ran with on the base commit itself: where the same tests
    fail there, the commit did not cause their failure (the base was red)."""
    command = next((c[len(OLD_PREFIX):] for c in record["commands"] if c.startswith(OLD_PREFIX)),
                   None)
    if command is None:
        return None
    git(clone, "checkout", "-qf", "--detach", record["parent"])
    git(clone, "clean", "-qffdx")
    rc, stdout, stderr = run_group(["sh", "-c", command], clone, env, 120)
    if rc is None:
        return {"rc": None, "failing": []}
    output = stdout + stderr
    old = record["old"] or {"failing": [], "tail": ""}
    on_new = set(old["failing"]) | failing_names(old["tail"])
    on_base = failing_names(output)
    return {"rc": rc, "failing": sorted(on_base),
            # Failing on the new code, passing on the base: what the commit changed.
            "caused": sorted(on_new - on_base) if on_new and (on_base or rc == 0) else None}


def classify(r):
    if r["rc"] is None:
        return "skipped: timeout"
    if r["new"] is None or r["new"]["status"] != "passed":
        return "skipped: tests fail at the commit"
    if r["rc"] in (0, 2):
        return "allowed"
    if re.search(r"the tests as they were (fail|time out|could not run) on your code", r["stdout"]):
        return "blocked: old tests fail"
    return "blocked: other"


def table(work, projects):
    work = pathlib.Path(work)
    rows, blocks, others, notes = [], [], [], []
    for project in projects:
        path = work / f"{project}.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        count = lambda cls: sum(r["class"] == cls for r in records)
        ran_old = sum(r["old"] is not None for r in records)
        unjudged = sum("could not be judged" in r["stdout"] for r in records)
        rows.append((project, PROJECTS[project]["lang"], len(records), count("allowed"), ran_old,
                     count("blocked: old tests fail"), count("blocked: other"),
                     sum(r["class"].startswith("skipped") for r in records), unjudged))
        for r in records:
            if r["class"] == "blocked: old tests fail":
                blocks.append((project, r))
            elif r["class"] == "blocked: other":
                others.append((project, r))
            elif "could not be judged" in r["stdout"]:
                notes.append((project, r))
    print("| project | language | commits replayed | allowed | old tests ran | blocked: old "
          "tests fail | blocked: line findings | skipped | old tests not judged |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(map(str, row)) + " |")
    for title, items in (("Blocked by the old tests", blocks), ("Blocked otherwise", others),
                         ("Allowed, old tests not judged", notes)):
        print(f"\n{title}:\n")
        for project, r in items:
            lines = r["stdout"].splitlines()
            if r["class"] == "blocked: other":
                # The first finding: the line after the block's heading.
                reason = next((lines[i + 1].strip() for i, l in enumerate(lines[:-1])
                               if l.startswith("Checkpoint")), "")
            else:
                reason = next((l.strip() for l in lines if "the tests as they were" in l), "")
            base = r.get("base") or {}
            red = (f" [base red: {', '.join(base['failing'][:3]) or 'exit %s' % base['rc']}]"
                   if base.get("rc") else "")
            print(f"- {project} {r['commit'][:10]} {r['subject'][:70]!r}{red}: {reason[:240]}")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        table(sys.argv[2], sys.argv[3:])
