//! The task journal through the real binary: tasks, steps, validations with signed receipts,
//! checkpoints, crash recovery, retention, and the reliability figures.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{code, git};

/// A fixture repository plus a home directory where the signing key is created.
struct Setup {
    repo: tempfile::TempDir,
    home: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Setup {
    fn new() -> Setup {
        Setup {
            repo: checkpoint_testkit::repo("python-passing"),
            home: tempfile::tempdir().unwrap(),
            env: Vec::new(),
        }
    }

    fn env(mut self, key: &str, value: &str) -> Setup {
        self.env.push((key.into(), value.into()));
        self
    }

    fn dir(&self) -> &Path {
        self.repo.path()
    }

    /// `checkpoint ARGS` in the repository, isolated as [`Setup::isolated`] says.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_checkpoint"));
        cmd.args(args);
        self.isolated(cmd)
    }

    /// `cmd` in the repository, with `HOME`/`XDG_CONFIG_HOME` in the temp home and no
    /// `CHECKPOINT_*` variables but ours.
    fn isolated(&self, mut cmd: Command) -> Command {
        cmd.current_dir(self.dir())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .envs(checkpoint_testkit::git_env())
            .stdin(Stdio::null());
        for (key, _) in std::env::vars() {
            if key.starts_with("CHECKPOINT_") {
                cmd.env_remove(key);
            }
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run checkpoint")
    }

    /// `checkpoint ARGS` in the repository as another user, whose home (and key) is `home`.
    fn run_as(&self, home: &Path, args: &[&str]) -> Output {
        self.run_as_with(home, &[], args)
    }

    /// [`Setup::run_as`] with the variables `env` set too.
    fn run_as_with(&self, home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
        let mut cmd = self.command(args);
        cmd.env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .envs(env.iter().copied());
        cmd.output().expect("run checkpoint")
    }

    /// Runs and asserts the exit status; returns stdout.
    fn ok(&self, args: &[&str], expected: i32) -> String {
        let out = self.run(args);
        assert_eq!(
            code(&out),
            expected,
            "checkpoint {args:?}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// An agent's stop, judged by `checkpoint check` from its payload (a check by hand records
    /// nothing); returns stdout, asserting the stop was allowed.
    fn agent_stop(&self) -> String {
        self.agent_stop_replying(None)
    }

    /// [`Setup::agent_stop`] of a turn whose last reply was `reply`.
    fn agent_stop_replying(&self, reply: Option<&str>) -> String {
        use std::io::Write;
        let mut payload = serde_json::json!({
            "session_id": "s",
            "transcript_path": "/dev/null",
            "cwd": self.dir(),
            "hook_event_name": "Stop",
            "stop_hook_active": false,
        });
        if let Some(reply) = reply {
            payload["last_assistant_message"] = reply.into();
        }
        let mut child = self
            .command(&["check", "--agent", "claude"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(payload.to_string().as_bytes()).unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stdout));
        String::from_utf8(out.stdout).unwrap()
    }

    /// Starts task `t` with one step `a`, starts it and validates it with `command` (which must
    /// pass): a task holding one signed receipt.
    fn validated(&self, command: &str) {
        self.ok(&["task", "start", "t", "--steps", "a"], 0);
        self.ok(&["step", "start"], 0);
        self.ok(&["validate", "--", command], 0);
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args, 0)).unwrap()
    }

    fn task_dir(&self) -> PathBuf {
        let status = self.json(&["status", "--json"]);
        PathBuf::from(status["hook_md"].as_str().unwrap())
            .parent()
            .unwrap()
            .to_owned()
    }
}

#[test]
fn a_task_from_start_to_cleanup() {
    let s = Setup::new().env("CHECKPOINT_JOURNAL_RETENTION_COMPLETED", "1ms");
    assert!(s.ok(&["status"], 0).starts_with("No active task."));
    let started = s.ok(
        &[
            "task",
            "start",
            "calc work",
            "--steps",
            "plan,impl",
            "--validate",
            "impl=python3 -m unittest -q",
        ],
        0,
    );
    assert!(started.contains("plan → impl"), "{started}");
    let again = s.run(&["task", "start", "other", "--steps", "a"]);
    assert_eq!(code(&again), 2);
    assert!(String::from_utf8_lossy(&again.stderr).contains("is still step_pending"));

    s.ok(&["step", "start", "--note", "reading the code"], 0);
    s.ok(&["step", "done"], 0);
    let out = s.run(&["step", "start", "plan"]);
    assert_eq!(code(&out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("already done; do not repeat it"));
    s.ok(&["step", "start", "impl"], 0);
    let failed = s.ok(
        &["validate", "--", "python3", "-c", "import sys; sys.exit(3)"],
        1,
    );
    assert!(failed.contains("Validation FAILED"), "{failed}");
    fs::write(s.dir().join("extra.py"), "X = 1\n").unwrap();
    s.ok(&["save", "tests written"], 0);
    let done = s.ok(&["step", "done"], 0);
    assert!(
        done.contains("Validation passed: `python3 -m unittest -q`"),
        "{done}"
    );

    let status = s.json(&["status", "--json"]);
    let task = &status["task"];
    assert_eq!(task["state"], "step_pending");
    assert_eq!(task["schema"], 2);
    assert_eq!(status["stale"], false);
    let files = &task["checkpoints"].as_array().unwrap().last().unwrap()["files"];
    assert_eq!(files[0]["path"], "extra.py");
    assert_eq!(files[0]["size"], 6);

    let receipts = s.json(&["receipts", "verify", "--json"]);
    let checks: Vec<&str> = receipts
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["check"]["result"].as_str().unwrap())
        .collect();
    assert_eq!(checks, ["verified", "verified"]);
    let key = s
        .home
        .path()
        .join("config/checkpoint/keys/receipt-ed25519.pem");
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&key), 0o600);
    assert_eq!(mode(key.parent().unwrap()), 0o700);

    let log = s.ok(&["log"], 0);
    for expected in [
        "task_created",
        "step_started [plan]  → step_running",
        "validation_failed [impl]",
        "checkpoint [impl]: #2 manual: tests written",
        "checkpoint [impl]: #4 step_done",
        "step_done [impl]",
    ] {
        assert!(log.contains(expected), "{expected:?} missing from\n{log}");
    }
    let kinds: Vec<String> = s
        .json(&["log", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("task_created"));

    let task_dir = s.task_dir();
    s.ok(&["task", "complete"], 0);
    let dry = s.ok(&["cleanup", "--dry-run"], 0);
    assert!(dry.starts_with("would remove calc-work-"), "{dry}");
    assert!(task_dir.exists());
    let removed = s.json(&["cleanup", "--json"]);
    assert_eq!(removed["tasks"][0]["state"], "completed");
    assert!(!task_dir.exists());
    assert!(s.ok(&["cleanup"], 0).contains("Nothing to clean up."));
}

#[test]
fn cleanup_expires_session_files_older_than_the_continuity_log() {
    let s = Setup::new();
    s.ok(&["save", "a session checkpoint"], 0);
    let sessions = s.dir().join(".git/checkpoint/sessions");
    fs::create_dir_all(&sessions).unwrap();
    let now = std::time::SystemTime::now();
    for (name, hours) in [("claude-old.json", 240), ("claude-young.json", 2)] {
        let path = sessions.join(name);
        fs::write(&path, "{}").unwrap();
        let file = fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(now - Duration::from_secs(hours * 3600))
            .unwrap();
    }
    let dry = s.ok(&["cleanup", "--dry-run"], 0);
    assert_eq!(
        dry.trim(),
        "would remove 1 session file(s) past their retention"
    );
    assert!(sessions.join("claude-old.json").is_file());
    let removed = s.json(&["cleanup", "--json"]);
    assert_eq!(removed["tasks"], serde_json::json!([]));
    assert_eq!(removed["sessions"][0]["file"], "claude-old.json");
    assert_eq!(removed["sessions"].as_array().unwrap().len(), 1);
    assert!(!sessions.join("claude-old.json").exists());
    assert!(sessions.join("claude-young.json").is_file());
    assert_eq!(s.ok(&["cleanup"], 0).trim(), "Nothing to clean up.");
}

#[test]
fn templates_define_steps_and_unfinished_tasks_survive_cleanup() {
    let s = Setup::new().env("CHECKPOINT_JOURNAL_RETENTION_ABANDONED", "1ms");
    let template = s.home.path().join("t.toml");
    fs::write(
        &template,
        "name = \"from template\"\n[[step]]\nname = \"only\"\nvalidate = \"true\"\n",
    )
    .unwrap();
    s.ok(
        &["task", "start", "--template", template.to_str().unwrap()],
        0,
    );
    let task = &s.json(&["task", "status", "--json"])["task"];
    assert_eq!(task["name"], "from template");
    assert_eq!(task["steps"][0]["validate"], "true");
    assert!(
        s.ok(&["cleanup", "--dry-run"], 0)
            .contains("Nothing to clean up.")
    );
    s.ok(&["task", "abandon", "--note", "not needed"], 0);
    assert!(s.ok(&["cleanup", "--dry-run"], 0).contains("(abandoned,"));
}

#[test]
fn status_says_what_to_do_next_while_the_task_waits() {
    let s = Setup::new();
    let next = |s: &Setup| {
        let status = s.ok(&["status"], 0);
        let line = status.lines().find(|l| l.starts_with("Next: "));
        line.unwrap_or("(no Next line)").to_owned()
    };
    s.ok(&["task", "start", "t", "--steps", "a,b"], 0);
    let mut seen = vec![next(&s)];
    s.ok(&["step", "start"], 0);
    seen.push(next(&s));
    s.ok(&["step", "done"], 0);
    for _ in 0..3 {
        s.ok(&["step", "start"], 0);
        s.ok(&["step", "fail"], 0);
    }
    seen.push(next(&s));
    s.ok(&["step", "start"], 0);
    s.ok(&["step", "done"], 0);
    seen.push(next(&s));
    insta::assert_snapshot!(seen.join("\n"), @r#"
    Next: start step "a" (1 of 2) with `checkpoint step start`.
    (no Next line)
    Next: a human decides: step "b" failed 3 times. `checkpoint step start` tries it again; `checkpoint task fail` or `checkpoint task abandon` ends the task.
    Next: every step is done: finish with `checkpoint task complete`.
    "#);
}

#[test]
fn tampered_receipts_and_corrupt_state_are_reported() {
    let s = Setup::new();
    s.validated("true");
    let dir = s.task_dir();
    let json = dir.join("hook.json");
    let text = fs::read_to_string(&json).unwrap();
    let tampered = text.replacen(r#"\"exit_code\":0"#, r#"\"exit_code\":1"#, 1);
    assert_ne!(tampered, text);
    fs::write(&json, &tampered).unwrap();
    let verify = s.ok(&["receipts", "verify"], 1);
    assert!(
        verify.contains("INVALID: signature does not match"),
        "{verify}"
    );
    assert!(
        verify.contains("1 receipt(s): 0 verified, 1 invalid"),
        "{verify}"
    );

    // A missing hook.md is regenerated by a read command.
    fs::remove_file(dir.join("hook.md")).unwrap();
    s.ok(&["status"], 0);
    assert!(
        fs::read_to_string(dir.join("hook.md"))
            .unwrap()
            .contains("## What To Do Now")
    );

    fs::write(&json, "{ torn").unwrap();
    let out = s.run(&["save", "x"]);
    assert_eq!(code(&out), 3);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("corrupt task record") && stderr.contains("hook.json.prev"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&json).unwrap(), "{ torn");
    assert!(
        fs::read_to_string(dir.join("hook.json.prev"))
            .unwrap()
            .contains("\"schema\"")
    );
}

/// 64 `checkpoint save` processes at once, three rounds, while a reader keeps parsing
/// hook.json: every entry arrives and every read parses.
#[test]
#[allow(clippy::print_stderr)] // the figures go in the test output
fn concurrent_processes_lose_no_entries() {
    const PROCESSES: usize = 64;
    const ROUNDS: usize = 3;
    let s = Setup::new();
    s.ok(&["task", "start", "t", "--steps", "a"], 0);
    s.ok(&["step", "start"], 0);
    let json = s.task_dir().join("hook.json");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let started = Instant::now();
    let reads = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut reads = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let bytes = fs::read(&json).unwrap();
                serde_json::from_slice::<Value>(&bytes).expect("hook.json always parses");
                reads += 1;
            }
            reads
        });
        for round in 0..ROUNDS {
            let children: Vec<_> = (0..PROCESSES)
                .map(|i| {
                    s.command(&["save", &format!("entry-{round}-{i}")])
                        .stdout(Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect();
            for mut child in children {
                assert!(child.wait().unwrap().success());
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        reader.join().unwrap()
    });
    let elapsed = started.elapsed();
    let history = s.json(&["log", "--json"]);
    let details: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["detail"].as_str())
        .collect();
    for round in 0..ROUNDS {
        for i in 0..PROCESSES {
            let suffix = format!(": entry-{round}-{i}");
            let found = details.iter().filter(|d| d.ends_with(&suffix)).count();
            assert_eq!(found, 1, "entry-{round}-{i}");
        }
    }
    let task = &s.json(&["status", "--json"])["task"];
    assert_eq!(
        task["checkpoints"].as_array().unwrap().len(),
        50,
        "pruned to the maximum"
    );
    // The history store holds exactly the committed entries, every line whole.
    assert_eq!(task["history_len"], history.as_array().unwrap().len());
    let stored: usize = fs::read_dir(s.task_dir().join("history"))
        .unwrap()
        .map(|chunk| {
            let text = fs::read_to_string(chunk.unwrap().path()).unwrap();
            assert!(text.ends_with('\n'));
            for line in text.lines() {
                serde_json::from_str::<Value>(line).expect("every history line parses");
            }
            text.lines().count()
        })
        .sum();
    assert_eq!(task["history_len"], stored);
    assert_eq!(task["next_checkpoint"], (PROCESSES * ROUNDS + 1) as u64);
    // The task's ref holds the same record, one commit per revision: no transaction skipped it.
    let name = format!("refs/checkpoint/tasks/{}", task["id"].as_str().unwrap());
    let show = git(s.dir(), &["show", &format!("{name}:hook.json")]);
    assert_eq!(show.stdout, fs::read(&json).unwrap());
    let commits = String::from_utf8(git(s.dir(), &["rev-list", "--count", &name]).stdout).unwrap();
    assert_eq!(commits.trim(), task["revision"].to_string());
    eprintln!(
        "concurrency: {} saves by {PROCESSES} concurrent processes x {ROUNDS} rounds in {elapsed:?}, \
         0 lost, {reads} concurrent reads all parsed",
        PROCESSES * ROUNDS
    );
}

/// The issue's "done when": a real repository, two validated steps, a commit through the
/// installed git hook, the agent killed mid-step, the stale threshold passed, `checkpoint
/// recover` names the step to resume and lists both steps as DO NOT REPEAT with verified
/// receipts.
#[test]
fn an_agent_killed_mid_step_resumes_from_hook_md() {
    let s = Setup::new().env("CHECKPOINT_JOURNAL_STALE_THRESHOLD", "1s");
    let hooks = s.dir().join(".git/hooks");
    fs::write(
        hooks.join("post-commit"),
        "#!/bin/sh\necho theirs > .git/theirs-ran\n",
    )
    .unwrap();
    fs::set_permissions(hooks.join("post-commit"), fs::Permissions::from_mode(0o755)).unwrap();
    let original = fs::read(hooks.join("post-commit")).unwrap();
    let dry = s.ok(&["install", "git", "--dry-run"], 0);
    assert!(
        dry.contains("post-commit: would be installed; the existing hook"),
        "{dry}"
    );
    assert_eq!(fs::read(hooks.join("post-commit")).unwrap(), original);
    let installed = s.ok(&["install", "git"], 0);
    assert!(installed.contains("pre-push: installed"), "{installed}");
    s.ok(
        &[
            "task",
            "start",
            "feature",
            "--steps",
            "add-mul,add-div,docs",
            "--validate",
            "add-mul=python3 -m unittest -q",
            "--validate",
            "add-div=python3 -m unittest -q",
        ],
        0,
    );
    for (step, code) in [
        ("add-mul", "def mul(a, b):\n    return a * b\n"),
        ("add-div", "def div(a, b):\n    return a / b\n"),
    ] {
        s.ok(&["step", "start", step], 0);
        let mut calc = fs::read_to_string(s.dir().join("calc.py")).unwrap();
        calc.push_str(&format!("\n\n{code}"));
        fs::write(s.dir().join("calc.py"), calc).unwrap();
        s.ok(&["step", "done"], 0);
    }
    git(s.dir(), &["commit", "-qam", "mul and div"]);
    assert!(
        s.dir().join(".git/theirs-ran").exists(),
        "the chained hook ran"
    );
    let log = s.ok(&["log"], 0);
    assert!(
        log.contains(" commit"),
        "the post-commit hook took a checkpoint:\n{log}"
    );

    // The "agent": starts the last step, edits, saves, then hangs until it is killed.
    let script = format!(
        "{exe} step start docs --note 'documenting mul and div' >/dev/null && \
         printf '# calc\\n\\nmul, div\\n' > README.md && {exe} save 'readme drafted' >/dev/null && \
         printf 'more\\n' >> README.md && echo ready && exec sleep 600",
        exe = env!("CARGO_BIN_EXE_checkpoint")
    );
    let mut shell = Command::new("/bin/sh");
    shell.args(["-c", &script]).stdout(Stdio::piped());
    let mut agent = s.isolated(shell).spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(agent.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    agent.kill().unwrap();
    agent.wait().unwrap();

    // Past the stale threshold.
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.json(&["status", "--json"])["stale"] != true {
        assert!(Instant::now() < deadline, "never became stale");
        std::thread::sleep(Duration::from_millis(200));
    }
    let hook_md = s.ok(&["recover"], 0);
    let json = s.task_dir().join("hook.json");
    let after_first = fs::read(&json).unwrap();
    assert!(hook_md.contains("- **State:** recovering"), "{hook_md}");
    assert!(
        hook_md.contains("Resume step **docs** from checkpoint #"),
        "{hook_md}"
    );
    let dnr = hook_md.split("## DO NOT REPEAT").nth(1).unwrap();
    let dnr = dnr.split("\n## ").next().unwrap();
    for step in ["add-mul", "add-div"] {
        assert!(dnr.contains(&format!("- [x] **{step}** — done")), "{dnr}");
    }
    assert_eq!(
        dnr.matches("`python3 -m unittest -q` passed; verified")
            .count(),
        2,
        "{dnr}"
    );
    assert!(!dnr.contains("docs"), "{dnr}");
    assert!(
        hook_md.contains("- `README.md` — WARNING: changed since the last checkpoint"),
        "{hook_md}"
    );

    // Running it again changes nothing.
    let again = s.ok(&["recover"], 0);
    assert_eq!(again, hook_md);
    assert_eq!(fs::read(&json).unwrap(), after_first);
    let task_md = fs::read_to_string(s.task_dir().join("hook.md")).unwrap();
    assert_eq!(task_md.trim_end(), hook_md.trim_end());
    assert_eq!(code(&s.run(&["receipts", "verify"])), 0);

    // The agent resumes the step it was told to.
    s.ok(&["step", "start", "docs"], 0);
    s.ok(&["step", "done"], 0);
    s.ok(&["task", "complete"], 0);

    let removed = s.ok(&["uninstall", "git"], 0);
    assert!(
        removed.contains("post-commit: removed, the original hook put back"),
        "{removed}"
    );
    assert_eq!(fs::read(hooks.join("post-commit")).unwrap(), original);
    assert!(!hooks.join("pre-push").exists());
}

/// The stop gate and the journal together: an allowed stop leaves a `stop` checkpoint, a fresh
/// test run a signed receipt, and a cached pass is trusted only while its receipt verifies.
#[test]
fn the_gate_checkpoints_allowed_stops_and_signs_its_test_runs() {
    let s = Setup::new();
    let config = "[tests]\ncommand = \"python3 -m unittest -q\"\n[stop]\ncommit_gate = false\n";
    fs::write(s.dir().join("checkpoint.toml"), config).unwrap();
    git(s.dir(), &["commit", "-qam", "no commit gate"]);
    // The user trusts the project: its test command runs at stops.
    s.ok(&["trust", "--yes"], 0);
    s.ok(&["task", "start", "t", "--steps", "build"], 0);
    s.ok(&["step", "start"], 0);
    let calc = fs::read_to_string(s.dir().join("calc.py")).unwrap();
    fs::write(
        s.dir().join("calc.py"),
        calc + "\n\ndef mul(a, b):\n    return a * b\n",
    )
    .unwrap();

    let hook_json = s.task_dir().join("hook.json");
    let task =
        || -> Value { serde_json::from_str(&fs::read_to_string(&hook_json).unwrap()).unwrap() };
    let stops = |task: &Value| {
        task["checkpoints"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["trigger"] == "stop")
            .count()
    };

    assert!(s.agent_stop().starts_with("Checkpoint — Tests: 2 passed"));
    let after_first = task();
    assert_eq!(
        after_first["receipts"].as_array().unwrap().len(),
        1,
        "{after_first:#}"
    );
    assert_eq!(stops(&after_first), 1, "{after_first:#}");
    // The receipt names the tree it tested: once committed, that commit verifies.
    let payload = after_first["receipts"][0]["payload"].as_str().unwrap();
    let tree = serde_json::from_str::<Value>(payload).unwrap()["tree"].clone();
    git(s.dir(), &["add", "-A"]);
    let index_tree = git(s.dir(), &["write-tree"]).stdout;
    assert_eq!(
        tree,
        String::from_utf8(index_tree).unwrap().trim(),
        "{payload}"
    );
    git(s.dir(), &["reset", "-q"]);

    // Nothing changed: the cached pass is trusted because its signed receipt verifies (and the
    // stop has nothing new to checkpoint).
    assert!(s.agent_stop().contains(", cached)"));
    let after_second = task();
    assert_eq!(after_second["receipts"].as_array().unwrap().len(), 1);
    assert_eq!(stops(&after_second), 1);
    s.ok(&["receipts", "verify"], 0);

    // A forged receipt is not trusted: the tests run again and a new receipt is signed. The
    // stop reads the task's latest pass from `current.json` first, so both copies are forged.
    let forge = |receipt: &mut Value| {
        let sig = receipt["signature"].as_str().unwrap().to_owned();
        let flipped = if sig.starts_with('A') { "B" } else { "A" };
        receipt["signature"] = format!("{flipped}{}", &sig[1..]).into();
    };
    let mut forged = after_second.clone();
    forge(&mut forged["receipts"][0]);
    fs::write(&hook_json, serde_json::to_vec_pretty(&forged).unwrap()).unwrap();
    let current_json = hook_json.with_file_name("current.json");
    let mut current: Value = serde_json::from_slice(&fs::read(&current_json).unwrap()).unwrap();
    assert_eq!(current["passes"][0], after_second["receipts"][0]);
    forge(&mut current["passes"][0]);
    fs::write(&current_json, serde_json::to_vec_pretty(&current).unwrap()).unwrap();
    assert!(!s.agent_stop().contains("cached"));
    assert_eq!(task()["receipts"].as_array().unwrap().len(), 2);
}

/// A stop over the same work with the same reply saves no second copy of its checkpoints; a
/// new reply, an edit, or a checkpoint saved in between make the next stop save again.
#[test]
fn a_stop_that_changes_nothing_saves_no_second_checkpoint() {
    let s = Setup::new();
    let config = "[tests]\ncommand = \"true\"\n[stop]\ncommit_gate = false\n";
    fs::write(s.dir().join("checkpoint.toml"), config).unwrap();
    git(s.dir(), &["commit", "-qam", "no commit gate"]);
    s.ok(&["trust", "--yes"], 0);
    s.ok(&["task", "start", "t", "--steps", "build"], 0);
    s.ok(&["step", "start"], 0);
    fs::write(s.dir().join("notes.txt"), "one\n").unwrap();
    let hook_json = s.task_dir().join("hook.json");
    let saved = || {
        let task: Value = serde_json::from_str(&fs::read_to_string(&hook_json).unwrap()).unwrap();
        let tasks = (task["checkpoints"].as_array().unwrap().iter())
            .filter(|c| c["trigger"] == "stop")
            .count();
        // The session log, as the task's ref and the session's stop have it.
        let state = s.task_dir().parent().unwrap().parent().unwrap().to_owned();
        let log = fs::read_to_string(state.join("continuity/log.json")).unwrap();
        let log: Value = serde_json::from_str(&log).unwrap();
        let sessions = (log["checkpoints"].as_array().unwrap().iter())
            .filter(|c| c["trigger"] == "stop")
            .count();
        (tasks, sessions)
    };

    s.agent_stop_replying(Some("Added notes."));
    assert_eq!(saved(), (1, 1));
    s.agent_stop_replying(Some("Added notes."));
    s.agent_stop_replying(Some("Added notes."));
    assert_eq!(saved(), (1, 1), "the same work and reply: nothing new");

    s.agent_stop_replying(Some("Nothing else to do."));
    assert_eq!(saved(), (2, 2), "a new reply");
    fs::write(s.dir().join("notes.txt"), "two\n").unwrap();
    s.agent_stop_replying(Some("Nothing else to do."));
    assert_eq!(saved(), (3, 3), "an edit");
    s.ok(&["save", "by hand"], 0);
    s.agent_stop_replying(Some("Nothing else to do."));
    assert_eq!(saved(), (4, 4), "a checkpoint saved in between");
    s.agent_stop_replying(Some("Nothing else to do."));
    assert_eq!(saved(), (4, 4));
}

/// An allowed stop with an active task reads the change set once: the task's checkpoint reuses
/// the stop's `git status`.
#[test]
fn an_allowed_stop_with_a_task_runs_git_status_once() {
    let trace = tempfile::NamedTempFile::new().unwrap();
    let s = Setup::new().env("GIT_TRACE", trace.path().to_str().unwrap());
    fs::write(
        s.dir().join("checkpoint.toml"),
        "[stop]\ncommit_gate = false\n",
    )
    .unwrap();
    git(s.dir(), &["commit", "-qam", "no commit gate"]);
    s.ok(&["trust", "--yes"], 0);
    s.ok(&["task", "start", "t", "--steps", "build"], 0);
    s.ok(&["step", "start"], 0);
    fs::write(s.dir().join("new.py"), "x = 1\n").unwrap();
    fs::write(trace.path(), "").unwrap();
    s.agent_stop();
    let statuses = fs::read_to_string(trace.path())
        .unwrap()
        .lines()
        .filter(|l| l.contains("built-in: git") && l.contains(" status "))
        .count();
    assert_eq!(statuses, 1, "{}", fs::read_to_string(trace.path()).unwrap());
    let task = hook_json(&s.task_dir());
    let last = task["checkpoints"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["trigger"], "stop", "{task:#}");
    assert_eq!(last["files"][0]["path"], "new.py", "{task:#}");
}

/// A `gh pr create` seen after a shell tool call checkpoints the active task.
#[test]
fn a_pull_request_creation_checkpoints_the_task() {
    let s = Setup::new();
    s.ok(&["task", "start", "t", "--steps", "ship"], 0);
    s.ok(&["step", "start"], 0);
    let mut payload: Value = serde_json::from_str(&checkpoint_testkit::payload(
        "claude",
        "PostToolUse",
        s.dir(),
    ))
    .unwrap();
    payload["tool_input"]["command"] = "git push -u origin fix && gh pr create --fill".into();
    let mut cmd = s.command(&["check"]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    let log = s.ok(&["log"], 0);
    assert!(log.contains("pr"), "{log}");
    let task: Value =
        serde_json::from_str(&fs::read_to_string(s.task_dir().join("hook.json")).unwrap()).unwrap();
    let triggers: Vec<&str> = task["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["trigger"].as_str())
        .collect();
    assert_eq!(triggers.last(), Some(&"pr"), "{task:#}");
}

/// `hook.json` of the task in `dir`, parsed.
fn hook_json(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("hook.json")).unwrap()).unwrap()
}

/// A receipt of `task` (its payload unchanged) re-signed by a stranger's master key through a
/// task key of its own, with the stranger's certificate added to the task: a full forgery.
fn re_signed_by_a_stranger(task: &mut Value, receipt: &Value) -> Value {
    use checkpoint_core::journal::{MasterKey, Receipt};
    use checkpoint_core::policy::KeyDerivation;
    let original: Receipt = serde_json::from_value(receipt.clone()).unwrap();
    let id = task["id"].as_str().unwrap();
    let key = MasterKey::from_seed(&[9; 32]).task_key(id, &KeyDerivation::default());
    let forged = Receipt::new(&original.parsed().unwrap(), Some(&key.signer));
    task["certificates"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::to_value(&key.certificate).unwrap());
    serde_json::to_value(forged).unwrap()
}

/// Receipt ids are random; one of them pins nothing.
fn redact_ids(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("r-") {
        let id = &rest[i + 2..];
        let hex = id.bytes().take_while(u8::is_ascii_hexdigit).count();
        out.push_str(&rest[..i]);
        out.push_str(if hex == 12 { "r-[id]" } else { "r-" });
        rest = &id[if hex == 12 { 12 } else { 0 }..];
    }
    out + rest
}

/// Receipts are signed by per-task keys the master key certifies; `receipts verify` exits 1, with
/// one line per receipt, on one re-signed by a stranger, an unsigned one and one moved from
/// another task, and 0 only when all verify.
#[test]
fn receipts_verify_only_against_trusted_keys() {
    let s = Setup::new();
    let mut tasks = Vec::new();
    for name in ["one", "two"] {
        s.ok(&["task", "start", name, "--steps", "a"], 0);
        s.ok(&["step", "start"], 0);
        s.ok(&["validate", "--", "true"], 0);
        s.ok(&["validate", "--", "true"], 0);
        let verified = s.ok(&["receipts", "verify"], 0);
        assert!(
            verified.ends_with("2 receipt(s): 2 verified, 0 invalid\n"),
            "{verified}"
        );
        tasks.push(s.task_dir());
        s.ok(&["step", "done"], 0);
        s.ok(&["task", "complete"], 0);
    }
    let one = hook_json(&tasks[0]);
    let mut two = hook_json(&tasks[1]);
    let key = |task: &Value, i: usize| {
        task["receipts"][i]["public_key"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // Every receipt of a task shares its key; the two tasks' keys differ; each is certified.
    assert_eq!(key(&one, 0), key(&one, 1));
    assert_eq!(key(&two, 0), key(&two, 1));
    assert_ne!(key(&one, 0), key(&two, 0));
    assert_eq!(
        one["certificates"][0]["task_key"].as_str(),
        Some(key(&one, 0).as_str())
    );
    assert_eq!(
        one["certificates"][0]["master_key"],
        two["certificates"][0]["master_key"]
    );
    let two_id = two["id"].as_str().unwrap().to_owned();

    let original = two["receipts"][0].clone();
    let stranger = re_signed_by_a_stranger(&mut two, &original);
    let mut unsigned = two["receipts"][1].clone();
    unsigned["signature"] = Value::Null;
    unsigned["public_key"] = Value::Null;
    let moved = one["receipts"][0].clone();
    two["receipts"] = vec![original, stranger, unsigned, moved].into();
    fs::write(
        tasks[1].join("hook.json"),
        serde_json::to_vec_pretty(&two).unwrap(),
    )
    .unwrap();

    let verify = s.ok(&["receipts", "verify", "--task", &two_id], 1);
    insta::assert_snapshot!(redact_ids(&verify), @r"
    r-[id]  [a]  `true`  passed  verified (signed by you)
    r-[id]  [a]  `true`  passed  UNTRUSTED: certified by unknown key fd1724385aa0c75b… (not yours, not in allowed_signers)
    r-[id]  [a]  `true`  passed  UNSIGNED: no key signed it
    r-[id]  [a]  `true`  passed  INVALID: signed for another task
    4 receipt(s): 1 verified, 3 invalid
    ");
    let out = s.run(&["receipts", "verify", "--task", &two_id, "--json"]);
    assert_eq!(code(&out), 1);
    let results: Vec<Value> = serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["check"].clone())
        .collect();
    assert_eq!(
        results[0],
        serde_json::json!({"result": "verified", "signer": "you"})
    );
    assert_eq!(results[1]["result"], "unknown_key");
    assert_eq!(results[2], serde_json::json!({"result": "unsigned"}));
    assert_eq!(
        results[3],
        serde_json::json!({"result": "invalid", "reason": "signed for another task"})
    );
}

/// A teammate — another key directory on the same repository — trusts the receipts only once
/// the project's `.checkpoint/allowed_signers` lists this user's `keys export` line.
#[test]
fn a_teammate_verifies_through_allowed_signers() {
    let s = Setup::new();
    s.validated("true");
    let teammate_home = tempfile::tempdir().unwrap();
    let teammate = |args: &[&str]| s.run_as(teammate_home.path(), args);
    let stdout = |out: &Output| String::from_utf8_lossy(&out.stdout).into_owned();

    let untrusted = teammate(&["receipts", "verify"]);
    assert_eq!(code(&untrusted), 1, "{}", stdout(&untrusted));
    assert!(stdout(&untrusted).contains("UNTRUSTED: certified by unknown key"));
    assert!(
        String::from_utf8_lossy(&untrusted.stderr).contains(
            "warning: no signing key yet and no .checkpoint/allowed_signers: receipts cannot be verified"
        )
    );

    let line = s.ok(&["keys", "export", "--name", "alice@laptop"], 0);
    let master = hook_json(&s.task_dir())["certificates"][0]["master_key"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(line, format!("alice@laptop {master}\n"));
    let default_name = s.ok(&["keys", "export"], 0);
    assert!(default_name.contains('@') && default_name.ends_with(&format!(" {master}\n")));
    fs::create_dir_all(s.dir().join(".checkpoint")).unwrap();
    let signers = s.dir().join(".checkpoint/allowed_signers");
    fs::write(&signers, format!("# the team\n\n{line}")).unwrap();
    let trusted = teammate(&["receipts", "verify"]);
    assert_eq!(code(&trusted), 0, "{}", stdout(&trusted));
    assert!(
        stdout(&trusted).contains("passed  verified (signed by alice@laptop)"),
        "{}",
        stdout(&trusted)
    );

    fs::write(&signers, format!("{line}alice\n")).unwrap();
    let broken = teammate(&["receipts", "verify"]);
    assert_eq!(code(&broken), 3);
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(
        stderr.contains("allowed_signers:2: expected `<name> <key>`"),
        "{stderr}"
    );
    let bad_name = s.run(&["keys", "export", "--name", "al ice"]);
    assert_eq!(code(&bad_name), 2);
}

#[test]
fn a_finished_task_is_no_longer_the_active_one() {
    for end in ["complete", "abandon", "fail"] {
        let s = Setup::new();
        s.ok(&["task", "start", "feature", "--steps", "one"], 0);
        if end == "complete" {
            s.ok(&["step", "start"], 0);
            s.ok(&["step", "done"], 0);
        }
        s.ok(&["task", end], 0);
        s.ok(&["save", "halfway"], 0);
        let first = s.ok(&["progress", "created the schema"], 0);
        assert!(!first.contains("task"), "{end}: {first}");
        s.ok(&["progress", "wired the API"], 0);
        let resume = s.ok(&["resume"], 0);
        assert!(
            resume.contains("created the schema") && resume.contains("wired the API"),
            "{end}: {resume}"
        );
        let log = s.ok(&["log"], 0);
        assert!(
            !log.contains("feature"),
            "{end}: the session checkpoints, not the task: {log}"
        );
        // A new task can start at once.
        s.ok(&["task", "start", "next", "--steps", "one"], 0);
    }
}

/// The `DO NOT REPEAT` lines of `hook.md` for each done step: a step with no declared validation
/// that `checkpoint validate` validated names that receipt — the one `checkpoint receipts` lists
/// (it said "no validation receipt") —, one whose validation did not pass says so, and a step
/// validated by its declared command names the passing run, not the failed one.
#[test]
fn hook_md_names_the_receipt_that_validated_each_step() {
    let s = Setup::new();
    s.ok(
        &[
            "task",
            "start",
            "t",
            "--steps",
            "plan,implement,test",
            "--validate",
            "test=python3 -m unittest -q",
        ],
        0,
    );
    s.ok(&["step", "start"], 0);
    s.ok(&["validate", "--", "false"], 1);
    s.ok(&["step", "done"], 0);
    s.ok(&["step", "start"], 0);
    s.ok(&["validate", "--", "python3 -m unittest -q"], 0);
    s.ok(&["step", "done"], 0);
    s.ok(&["step", "start"], 0);
    s.ok(&["validate", "--", "false"], 1);
    s.ok(&["step", "done"], 0);
    let receipts = redact_ids(&s.ok(&["receipts"], 0));
    let hook_md = fs::read_to_string(s.task_dir().join("hook.md")).unwrap();
    let done: Vec<&str> = hook_md
        .lines()
        .skip_while(|l| *l != "## DO NOT REPEAT")
        .filter(|l| l.starts_with("- [x]") || l.starts_with("  - "))
        .map(|l| l.split(" — done at ").next().unwrap())
        .collect();
    insta::assert_snapshot!(format!("{receipts}\n{}", redact_ids(&done.join("\n"))), @r"
    r-[id]  [plan]  `false`  did not pass  verified (signed by you)
    r-[id]  [implement]  `python3 -m unittest -q`  passed  verified (signed by you)
    r-[id]  [test]  `false`  did not pass  verified (signed by you)
    r-[id]  [test]  `python3 -m unittest -q`  passed  verified (signed by you)

    - [x] **plan**
      - no passing validation receipt; the last validation: receipt `r-[id]`: `false` did not pass; verified (signed by you)
    - [x] **implement**
      - receipt `r-[id]`: `python3 -m unittest -q` passed; verified (signed by you)
    - [x] **test**
      - receipt `r-[id]`: `python3 -m unittest -q` passed; verified (signed by you)
    ");
}

/// `task list` shows every task's id (what `--task` takes), newest update first, with its state,
/// step and age, the active one marked; `--json` says the same for scripts, and a task whose
/// record is torn is listed as unreadable, not dropped.
#[test]
fn task_list_shows_every_task_and_marks_the_active_one() {
    let s = Setup::new();
    assert_eq!(
        s.ok(&["task", "list"], 0),
        "No tasks. Start one with `checkpoint task start NAME --steps a,b,c`.\n"
    );
    s.ok(&["task", "start", "fix the parser", "--steps", "a"], 0);
    s.ok(&["task", "abandon"], 0);
    s.ok(&["task", "start", "torn", "--steps", "a"], 0);
    let torn = s.task_dir();
    s.ok(&["task", "abandon"], 0);
    s.ok(
        &[
            "task",
            "start",
            "add login",
            "--steps",
            "plan,implement,test",
        ],
        0,
    );
    s.ok(&["step", "start"], 0);
    s.ok(&["step", "done"], 0);
    s.ok(&["step", "start"], 0);
    fs::write(torn.join("hook.json"), "{ torn").unwrap();

    let stamp = (r"-\d{8}T\d{6}-[0-9a-f]{4}", "-[stamp]");
    insta::with_settings!({filters => vec![stamp, (r"/\S+/hook.json", "[dir]/hook.json")]}, {
        insta::assert_snapshot!(s.ok(&["task", "list"], 0), @r"
        * add-login-[stamp]       step_running  implement (2 of 3)  updated just now  add login
          fix-the-parser-[stamp]  abandoned     -                   updated just now  fix the parser
          torn-[stamp]            unreadable    -                   -                 [dir]/hook.json: corrupt task record (key must be a string at line 1 column 3); left untouched, the last good copy is [dir]/hook.json.prev
        (* the active task)
        ");
    });
    let json = s.json(&["task", "list", "--json"]);
    assert_eq!(json["schema_version"], 1);
    let active = &json["tasks"][0];
    assert_eq!(active["name"], "add login");
    assert_eq!(active["state"], "step_running");
    assert_eq!(active["active"], true);
    assert_eq!(
        active["current_step"],
        serde_json::json!({"name": "implement", "number": 2, "of": 3})
    );
    assert!(active["updated_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(json["tasks"][1]["active"], false);
    assert_eq!(json["tasks"].as_array().unwrap().len(), 2);
    let id = json["unreadable"][0]["id"].as_str().unwrap();
    assert!(id.starts_with("torn-"), "{json}");

    // The id is what --task takes.
    let other = json["tasks"][1]["id"].as_str().unwrap();
    assert!(
        s.ok(&["status", "--task", other], 0)
            .contains("State: abandoned")
    );
}

/// A task named, and progress logged, with terminal escapes, bidirectional-text controls and a
/// line of their own: what `task start`, `status`, `step start`, `progress`, `resume` and `log`
/// print to the terminal, and the `hook.md` an agent reads, stay clean.
#[test]
fn injected_names_reach_no_terminal_raw() {
    use checkpoint_testkit::{INJECTED, assert_nothing_injected};
    let s = Setup::new();
    let step = format!("a {}", INJECTED.replace('\n', " "));
    let mut printed = s.ok(&["task", "start", INJECTED, "--steps", &step], 0);
    for args in [
        &["step", "start"][..],
        &["progress", INJECTED],
        &["status"],
        &["save", INJECTED],
        &["resume"],
        &["log"],
    ] {
        printed += &s.ok(args, 0);
    }
    assert_nothing_injected(&printed, "the terminal");
    assert!(
        printed.contains("x]0;owned[2J\\nTests: 12 passed."),
        "{printed}"
    );
    let hook_md = std::fs::read_to_string(s.task_dir().join("hook.md")).unwrap();
    assert_nothing_injected(&hook_md, "hook.md");
}

/// `checkpoint verify`: a commit whose exact tree the stop gate tested and passed verifies — no
/// task needed — one nobody tested does not; another user trusts the receipt only through a
/// signers list the verified commits cannot have edited: a file of their own (`--signers`), or
/// the list committed before them.
#[test]
fn verify_checks_each_commit_against_the_receipts_of_its_tree() {
    let s = Setup::new();
    s.ok(&["trust", "--yes"], 0);
    let commit = |message: &str| {
        git(s.dir(), &["add", "-A"]);
        git(s.dir(), &["commit", "-qm", message]);
        let out = git(s.dir(), &["rev-parse", "HEAD"]);
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let redacted = |text: String, commits: &[(&str, &str)]| {
        let mut text = redact_ids(&text);
        for (id, name) in commits {
            text = text.replace(&id[..12], name);
        }
        text
    };
    let mut calc = fs::read_to_string(s.dir().join("calc.py")).unwrap();
    calc.push_str("\n\ndef mul(a, b):\n    return a * b\n");
    fs::write(s.dir().join("calc.py"), &calc).unwrap();
    fs::write(s.dir().join("notes.txt"), "untracked, tested too\n").unwrap();
    let stop = s.ok(&["check"], 1);
    assert!(stop.contains("Tests: 2 passed"), "{stop}");
    let parent = String::from_utf8(git(s.dir(), &["rev-parse", "HEAD"]).stdout).unwrap();
    let tested = commit("mul");
    let names = [(tested.as_str(), "[tested]"), (parent.trim(), "[parent]")];
    insta::assert_snapshot!(redacted(s.ok(&["verify"], 0), &names), @r"
    Trusted signers: you (listed: .checkpoint/allowed_signers at [parent] (the parent of HEAD))
    [tested]  verified: `python3 -m unittest -q` passed on its tree (receipt r-[id] of a stop, signed by you)  mul
    ");

    fs::write(s.dir().join("calc.py"), calc.replace("a * b", "b * a")).unwrap();
    let untested = commit("untested");
    let names = [
        (tested.as_str(), "[tested]"),
        (untested.as_str(), "[untested]"),
        (parent.trim(), "[parent]"),
    ];
    insta::assert_snapshot!(redacted(s.ok(&["verify", "HEAD~2..HEAD"], 1), &names), @r"
    Trusted signers: you (listed: .checkpoint/allowed_signers at [parent] (HEAD~2))
    [untested]  NOT VERIFIED: no passing receipt of its tree  untested
    [tested]  verified: `python3 -m unittest -q` passed on its tree (receipt r-[id] of a stop, signed by you)  mul
    2 commits: 1 verified, 1 not
    ");
    let json = s.json(&["verify", "--json", &tested]);
    assert_eq!(json["ok"], true);
    assert_eq!(json["commits"][0]["result"], "verified");
    assert_eq!(json["commits"][0]["signer"], "you");
    assert_eq!(json["signers"]["names"], serde_json::json!(["you"]));
    let json: Value = serde_json::from_str(&s.ok(&["verify", "--json"], 1)).unwrap();
    assert_eq!(json["ok"], false);
    assert_eq!(json["commits"][0]["result"], "no_receipt");
    assert_eq!(s.run(&["verify", "no-such-rev"]).status.code(), Some(2));
    assert_eq!(
        s.run(&["verify", "--signers-from", "no-such-rev"])
            .status
            .code(),
        Some(2)
    );

    // Another user (another key), on the same repository.
    let teammate_home = tempfile::tempdir().unwrap();
    let teammate = |args: &[&str]| s.run_as(teammate_home.path(), args);
    let untrusted = teammate(&["verify", &tested]);
    assert_eq!(code(&untrusted), 1);
    let line = String::from_utf8_lossy(&untrusted.stdout).into_owned();
    assert!(
        line.contains("NOT VERIFIED: receipt r-")
            && line.contains("is UNTRUSTED: certified by unknown key"),
        "{line}"
    );
    let authors = s.ok(&["keys", "export", "--name", "alice@laptop"], 0);
    // Listed in the worktree, or in the commit being verified, the key proves nothing: whoever
    // made the commit could have put it there.
    fs::create_dir_all(s.dir().join(".checkpoint")).unwrap();
    fs::write(s.dir().join(".checkpoint/allowed_signers"), &authors).unwrap();
    assert_eq!(code(&teammate(&["verify", &tested])), 1);
    // A file of the verifier's own, outside the repository.
    let signers = teammate_home.path().join("signers");
    fs::write(&signers, &authors).unwrap();
    let signers = signers.to_str().unwrap();
    let trusted = teammate(&["verify", "--signers", signers, &tested]);
    assert_eq!(
        code(&trusted),
        0,
        "{}",
        String::from_utf8_lossy(&trusted.stdout)
    );
    assert!(String::from_utf8_lossy(&trusted.stdout).contains("signed by alice@laptop"));
    // The list as committed on a revision the verifier names.
    git(s.dir(), &["add", ".checkpoint/allowed_signers"]);
    git(s.dir(), &["commit", "-qm", "signers"]);
    let by_rev = teammate(&["verify", "--signers-from", "HEAD", &tested]);
    assert_eq!(code(&by_rev), 0, "{by_rev:?}");
    let by_env = s.run_as_with(
        teammate_home.path(),
        &[("CHECKPOINT_VERIFY_SIGNERS", signers)],
        &["verify", &tested],
    );
    assert_eq!(code(&by_env), 0, "{by_env:?}");
}

/// A receipt counts for a commit only when it is the stop gate's run of the test command the
/// commit configures: a validation of `true`, or of the test command itself (a validation runs
/// whatever it is given, approved or not), verifies nothing.
#[test]
fn a_receipt_of_another_command_does_not_verify_a_commit() {
    let s = Setup::new();
    s.validated("true");
    git(s.dir(), &["commit", "-qam", "nothing", "--allow-empty"]);
    let out = s.ok(&["verify"], 1);
    assert!(
        out.contains("NOT VERIFIED: `true` passed on its tree")
            && out.contains("but the tests the commit configures are `python3 -m unittest -q`"),
        "{out}"
    );
    s.ok(&["validate", "--", "python3 -m unittest -q"], 0);
    let out = s.ok(&["verify"], 1);
    assert!(
        out.contains("but a validation is not the stop gate's run of the approved tests"),
        "{out}"
    );
}

/// Receipts made before receipts recorded a tree cannot vouch for a commit, and say so.
#[test]
fn receipts_without_a_tree_say_so() {
    let s = Setup::new();
    s.validated("true");
    // Strip the tree from the stored receipt, as receipts were made before (a receipt without a
    // tree vouches for no commit, so its signature is not even looked at).
    let task_dir = s.task_dir();
    let mut task = hook_json(&task_dir);
    let receipt = task["receipts"][0].clone();
    let mut payload: Value = serde_json::from_str(receipt["payload"].as_str().unwrap()).unwrap();
    assert!(
        payload["tree"].as_str().is_some_and(|t| t.len() == 40),
        "{payload}"
    );
    payload.as_object_mut().unwrap().remove("tree");
    task["receipts"][0]["payload"] = Value::String(payload.to_string());
    fs::write(task_dir.join("hook.json"), task.to_string()).unwrap();
    let out = s.ok(&["verify"], 1);
    assert!(
        out.contains("NOT VERIFIED: no passing receipt of its tree (1 passing receipt(s) have no tree recorded: made before receipts recorded one)"),
        "{out}"
    );
}
