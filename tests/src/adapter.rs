//! The contract every adapter binary keeps, as reusable checks: each adapter's own tests call
//! these and add snapshots of its wire format.

use std::path::Path;

use serde_json::Value;

use crate::{HookRun, payload, repo, run_hook, run_hook_in};

/// How an agent's payloads name the fields the contract's checks change, and where its answers
/// hold context.
#[derive(Debug, Clone, Copy)]
pub struct Wire {
    /// The session id's field.
    pub session_id: &'static str,
    /// The transcript path's field.
    pub transcript_path: &'static str,
    /// The field that names the event, when the payload has one.
    pub event_name: Option<&'static str>,
    /// Where a context answer holds its text (a JSON pointer).
    pub context: &'static str,
    /// Where a block holds its message (a JSON pointer).
    pub block: &'static str,
    /// Where a notice for the user is (a JSON pointer).
    pub notice: &'static str,
}

impl Wire {
    /// Claude Code's payloads and answers, which Gemini CLI and Codex share.
    pub const SHARED: Wire = Wire {
        session_id: "session_id",
        transcript_path: "transcript_path",
        event_name: Some("hook_event_name"),
        context: "/hookSpecificOutput/additionalContext",
        block: "/reason",
        notice: "/systemMessage",
    };
}

/// One adapter binary and the names of its captured payloads.
#[derive(Debug, Clone, Copy)]
pub struct Adapter {
    /// Path of the built binary (`env!("CARGO_BIN_EXE_…")`).
    pub bin: &'static str,
    /// Fixture folder under `tests/payloads/`.
    pub agent: &'static str,
    /// The first end-of-turn payload of a turn.
    pub stop: &'static str,
    /// A repeated end-of-turn payload (`stop_hook_active: true`).
    pub stop_again: &'static str,
    /// The agent's no-op answer on stdout.
    pub no_op: &'static str,
    /// Its payloads' field names and its answers' context.
    pub wire: Wire,
}

impl Adapter {
    /// Runs the adapter in `dir` with a captured payload whose `cwd` is `dir`.
    pub fn fire(&self, dir: &Path, fixture: &str) -> HookRun {
        let stdin = payload(self.agent, fixture, dir);
        run_hook(Path::new(self.bin), dir, stdin.as_bytes(), &[])
    }

    /// Runs the adapter in `dir` with a captured payload whose `cwd` is `dir`, with
    /// `config_home` as the user's config directory and approving nothing there (see
    /// [`run_hook_in`]).
    pub fn fire_in(&self, config_home: &Path, dir: &Path, fixture: &str) -> HookRun {
        let stdin = payload(self.agent, fixture, dir);
        run_hook_in(config_home, Path::new(self.bin), dir, stdin.as_bytes(), &[])
    }

    /// Asserts the no-op answer: exit 0, stdout is the no-op, stderr has at most `stderr_lines`.
    pub fn assert_no_op(&self, run: &HookRun, stderr_lines: usize, what: &str) {
        assert_eq!(run.code, Some(0), "{what}: {run:?}");
        assert_eq!(run.stdout.trim_end(), self.no_op, "{what}: {run:?}");
        assert!(
            run.stderr.lines().count() <= stderr_lines,
            "{what}: {run:?}"
        );
    }

    /// Every broken payload gets the no-op answer and exactly one `checkpoint: …` stderr line.
    pub fn assert_bad_input_fails_open(&self) {
        let repo = repo("failing-test");
        for (what, bytes) in bad_payloads(self, repo.path()) {
            let run = run_hook(Path::new(self.bin), repo.path(), &bytes, &[]);
            self.assert_no_op(&run, 1, what);
            assert!(run.stderr.starts_with("checkpoint: "), "{what}: {run:?}");
        }
    }

    /// Events the gate does not judge get the no-op answer and a silent stderr, even in a
    /// repository whose tests fail.
    pub fn assert_other_events_are_no_ops(&self, fixtures: &[&str]) {
        let repo = repo("failing-test");
        for fixture in fixtures {
            let run = self.fire(repo.path(), fixture);
            self.assert_no_op(&run, 0, fixture);
        }
    }

    /// Runs the adapter in `dir` with a captured payload whose `cwd` is `dir` and whose `fields`
    /// are replaced, with extra environment variables.
    pub fn fire_with(
        &self,
        dir: &Path,
        fixture: &str,
        fields: &[(&str, serde_json::Value)],
        env: &[(&str, &str)],
    ) -> HookRun {
        let mut value: serde_json::Value =
            serde_json::from_str(&payload(self.agent, fixture, dir)).expect("fixture is JSON");
        for (key, field) in fields {
            value[*key] = field.clone();
        }
        run_hook(Path::new(self.bin), dir, value.to_string().as_bytes(), env)
    }

    /// A broken `checkpoint.toml` fails open on every event, with the reason on stderr, and
    /// tells the user that the gate is off on the first event of a session only: `first` shows
    /// the notice, `then` (same session) does not, `new_session` (another session) shows it
    /// again. Returns the notice's answer, for the adapter's snapshot.
    pub fn assert_config_error_told_once_per_session(
        &self,
        first: &str,
        then: &str,
        new_session: &str,
    ) -> Value {
        let repo = repo("failing-test");
        let dir = repo.path();
        std::fs::write(dir.join("checkpoint.toml"), "[stop\n").expect("write the config");
        let fire = |fixture: &str, session: &str| {
            let run = self.fire_with(dir, fixture, &[(self.wire.session_id, session.into())], &[]);
            assert_eq!(run.code, Some(0), "{fixture}: {run:?}");
            assert!(
                run.stderr.starts_with("checkpoint: ") && run.stderr.contains("syntax error"),
                "{fixture}: {run:?}"
            );
            run
        };
        let told = fire(first, "session-1");
        let answer: Value = serde_json::from_str(&told.stdout).expect("the notice is JSON");
        let notice = answer
            .pointer(self.wire.notice)
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(
            notice.starts_with("Checkpoint — The gate is off until its config is fixed"),
            "{first}: {told:?}"
        );
        let quiet = fire(then, "session-1");
        self.assert_no_op(&quiet, 1, &format!("{then} after {first}"));
        let again = fire(new_session, "session-2");
        let repeated: Value = serde_json::from_str(&again.stdout).expect("the notice is JSON");
        assert_eq!(repeated, answer, "{new_session} in a new session");
        let stable = answer
            .to_string()
            .replace(&dir.display().to_string(), "[repo]");
        serde_json::from_str(&stable).expect("still JSON")
    }

    /// The continuity contract, on a repository with a changed docs file:
    ///
    /// 1. an allowed stop saves a checkpoint and the next `SessionStart` injects it ("Resumed
    ///    from checkpoint: `<last message>`", the restart context, the changed file);
    /// 2. a tool call with the context at 85 % (per a transcript written here) saves a checkpoint
    ///    and tells the agent — with the tool call itself, or for agents that cannot take context
    ///    before a tool runs (Gemini) with its result;
    /// 3. the next tool call within five minutes says nothing.
    ///
    /// Returns the two answers (resume, notice) for the adapter's wire-format snapshots.
    pub fn assert_continuity(
        &self,
        session_start: &str,
        pre_tool: &str,
        post_tool: &str,
    ) -> (Value, Value) {
        let repo = repo("docs-only");
        let dir = repo.path();
        let quiet = self.fire(dir, session_start);
        self.assert_no_op(&quiet, 0, "SessionStart before any checkpoint");

        // An agent whose stop names no reply (Copilot) has it read from its transcript.
        let replies = tempfile::tempdir().expect("temp dir");
        let stop = match reply_line(self.agent, "Done.") {
            Some(line) => {
                let transcript = replies.path().join("transcript.jsonl");
                std::fs::write(&transcript, line).expect("write transcript");
                let path = Value::String(transcript.display().to_string());
                self.fire_with(dir, self.stop, &[(self.wire.transcript_path, path)], &[])
            }
            None => self.fire(dir, self.stop),
        };
        self.assert_no_op(&stop, 0, "allowed stop");
        let resume = self.fire(dir, session_start);
        let resume = self.context_of(&resume, session_start);
        let text = resume
            .pointer(self.wire.context)
            .and_then(Value::as_str)
            .unwrap_or_default();
        for expected in [
            "Resumed from checkpoint: Done. (saved just now)",
            "⚠️ SESSION RESET: a new session started.",
            "Files modified (do not recreate):\n- README.md\n",
        ] {
            assert!(text.contains(expected), "{expected:?} in {text}");
        }

        let transcripts = tempfile::tempdir().expect("temp dir");
        let transcript = transcripts.path().join("transcript.jsonl");
        std::fs::write(&transcript, usage_line(self.agent, 170_000)).expect("write transcript");
        let fields = [(
            self.wire.transcript_path,
            Value::String(transcript.display().to_string()),
        )];
        let env = [("CHECKPOINT_CONTEXT_WINDOW", "200000")];
        let mut run = self.fire_with(dir, pre_tool, &fields, &env);
        let mut event = pre_tool;
        if run.stdout.trim_end() == self.no_op {
            // The notice waits for the tool's result.
            run = self.fire_with(dir, post_tool, &fields, &env);
            event = post_tool;
        }
        let notice = self.context_of(&run, event);
        let text = notice
            .pointer(self.wire.context)
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(
            text.starts_with("Checkpoint saved (context 85 %) — 170,000 of 200,000 tokens"),
            "{text}"
        );
        for fixture in [pre_tool, post_tool] {
            let again = self.fire_with(dir, fixture, &fields, &env);
            self.assert_no_op(&again, 0, "a second tool call within five minutes");
        }
        (resume, notice)
    }

    /// The JSON answer of `run`, checked to be context for `event` and nothing else: the text
    /// where the agent's answers hold it, under the event's name where they name it.
    fn context_of(&self, run: &HookRun, event: &str) -> Value {
        assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""), "{run:?}");
        let answer: Value =
            serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
        assert!(
            answer
                .pointer(self.wire.context)
                .is_some_and(Value::is_string),
            "{run:?}"
        );
        if let Some(specific) = answer.get("hookSpecificOutput") {
            assert_eq!(specific["hookEventName"], event, "{run:?}");
        }
        assert_eq!(answer.as_object().map(|o| o.len()), Some(1), "{run:?}");
        answer
    }

    /// For an agent that sends a block's reason back as the next prompt (`retry_prompt`, a
    /// captured payload of that prompt): the retry does not count as a new user turn, so the
    /// block count goes on and the fourth stop is allowed. `block` is the agent's word for a block.
    pub fn assert_retry_prompt_counts_on(&self, retry_prompt: &str, block: &str) {
        let repo = uncommitted();
        let dir = repo.path();
        let mut reason = String::new();
        let mut answers = Vec::new();
        for i in 0..4 {
            if i > 0 {
                let prompt = [("prompt", Value::String(reason.clone()))];
                let run = self.fire_with(dir, retry_prompt, &prompt, &[]);
                self.assert_no_op(&run, 0, "retry prompt");
            }
            let stop = if i == 0 { self.stop } else { self.stop_again };
            let run = self.fire(dir, stop);
            let answer: Value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
            let blocked = answer.pointer(self.wire.block).and_then(Value::as_str);
            if let Some(r) = blocked {
                reason = r.to_owned();
            }
            let word = answer["decision"].as_str();
            answers.push(
                word.or(blocked.map(|_| block))
                    .unwrap_or("allow")
                    .to_owned(),
            );
        }
        assert_eq!(answers, [block, block, block, "allow"]);
    }

    /// Whether `run` answered with a block.
    pub fn blocked(&self, run: &HookRun) -> bool {
        serde_json::from_str::<Value>(&run.stdout)
            .is_ok_and(|answer| answer.pointer(self.wire.block).is_some())
    }

    /// Three blocked stops in a row, then the fourth: the answer once the cap is reached.
    pub fn fourth_stop(&self, dir: &Path) -> HookRun {
        let first = self.fire(dir, self.stop);
        assert!(self.blocked(&first), "{first:?}");
        for _ in 0..2 {
            let again = self.fire(dir, self.stop_again);
            assert!(self.blocked(&again), "{again:?}");
        }
        self.fire(dir, self.stop_again)
    }
}

/// How a subagent's stop is judged (for agents with subagent hooks: `SubagentStart.json` and
/// `SubagentStop.json` fixtures):
///
/// 1. a read-only subagent is allowed, however often it stops, even though the parent's
///    uncommitted edit fails the tests — it is never told to commit nor shown the parent's work;
/// 2. an internal fork (empty `agent_type`) is not judged;
/// 3. a subagent that breaks a test is blocked with the failing test and no commit request; one
///    that only adds a file is allowed;
/// 4. its blocks are counted apart from the parent's and from another subagent's.
///
/// Returns the block of step 3, for the adapter's wire-format snapshot.
pub fn assert_subagent_rules(adapter: &Adapter) -> Value {
    let parent_broke = repo("failing-test");
    let dir = parent_broke.path();
    let config_home = tempfile::tempdir().expect("temp config home");
    crate::trust(config_home.path(), dir, &[]);
    let fire = |fixture: &str, fields: &[(&str, Value)]| {
        let mut value: Value =
            serde_json::from_str(&payload(adapter.agent, fixture, dir)).expect("fixture is JSON");
        for (key, field) in fields {
            value[*key] = field.clone();
        }
        run_hook_in(
            config_home.path(),
            Path::new(adapter.bin),
            dir,
            value.to_string().as_bytes(),
            &[],
        )
    };
    adapter.assert_no_op(&fire("SubagentStart", &[]), 0, "SubagentStart");
    for again in [false, true, true, true] {
        let run = fire("SubagentStop", &[("stop_hook_active", Value::Bool(again))]);
        adapter.assert_no_op(&run, 0, "a read-only subagent's stop");
    }
    let fork = [("agent_type", Value::String(String::new()))];
    adapter.assert_no_op(&fire("SubagentStart", &fork), 0, "a fork's start");
    std::fs::write(
        dir.join("notes.md"),
        "forked
",
    )
    .expect("write notes.md");
    adapter.assert_no_op(&fire("SubagentStop", &fork), 0, "an internal fork's stop");

    // The subagent starts on a clean tree and breaks `sub`.
    let clean = repo("python-passing");
    let dir = clean.path();
    let fire = |fixture: &str, fields: &[(&str, Value)]| {
        let mut value: Value =
            serde_json::from_str(&payload(adapter.agent, fixture, dir)).expect("fixture is JSON");
        for (key, field) in fields {
            value[*key] = field.clone();
        }
        run_hook(
            Path::new(adapter.bin),
            dir,
            value.to_string().as_bytes(),
            &[],
        )
    };
    let second = [("agent_id", Value::String("second-subagent".into()))];
    adapter.assert_no_op(&fire("SubagentStart", &[]), 0, "SubagentStart");
    let calc = std::fs::read_to_string(dir.join("calc.py")).expect("read calc.py");
    std::fs::write(dir.join("calc.py"), calc.replace("a - b", "a * b")).expect("break sub");
    // Another subagent starts after the breakage: it is not its own.
    adapter.assert_no_op(&fire("SubagentStart", &second), 0, "another SubagentStart");
    let blocked = fire("SubagentStop", &[]);
    let answer: Value =
        serde_json::from_str(&blocked.stdout).unwrap_or_else(|e| panic!("{e}: {blocked:?}"));
    let reason = answer["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(
            "- test_calc.CalcTest.test_sub
"
        ),
        "{reason}"
    );
    assert!(!reason.contains("Commit"), "{reason}");
    for _ in 0..2 {
        let again = fire("SubagentStop", &[("stop_hook_active", Value::Bool(true))]);
        assert!(again.stdout.contains("\"decision\""), "{again:?}");
    }
    // The parent's first block of the turn, after the subagent's three: counted apart.
    let parent = fire(adapter.stop_again, &[]);
    assert!(parent.stdout.contains("\"decision\""), "{parent:?}");
    assert_eq!(stored_blocks(dir, adapter, ""), 1);
    assert_eq!(stored_blocks(dir, adapter, "+second-subagent"), 0);
    let capped = fire("SubagentStop", &[("stop_hook_active", Value::Bool(true))]);
    assert!(capped.stdout.contains("after 3 blocks"), "{capped:?}");
    let other = fire("SubagentStop", &second);
    adapter.assert_no_op(&other, 0, "another subagent's stop");

    let added = repo("python-passing");
    let dir = added.path();
    let start = payload(adapter.agent, "SubagentStart", dir);
    let bin = Path::new(adapter.bin);
    adapter.assert_no_op(&run_hook(bin, dir, start.as_bytes(), &[]), 0, "start");
    std::fs::write(dir.join("deploy.yml"), "replicas: 2\n").expect("write deploy.yml");
    let stop = payload(adapter.agent, "SubagentStop", dir);
    let run = run_hook(bin, dir, stop.as_bytes(), &[]);
    adapter.assert_no_op(&run, 0, "a subagent that added an untested file");
    let _ = answer["decision"].as_str().expect("a block");
    answer
}

/// `n` blocked stops of one session at once (repeated stops, with a cap above `n`): every block
/// is counted, none lost to a concurrent update.
pub fn assert_concurrent_blocks_are_counted(adapter: &Adapter, n: u32) {
    let repo = uncommitted();
    let dir = repo.path();
    let config_home = tempfile::tempdir().expect("temp config home");
    crate::trust(config_home.path(), dir, &[]);
    let stdin = payload(adapter.agent, adapter.stop_again, dir);
    let env = [("CHECKPOINT_STOP_MAX_BLOCKS", "100")];
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..n)
            .map(|_| {
                scope.spawn(|| {
                    run_hook_in(
                        config_home.path(),
                        Path::new(adapter.bin),
                        dir,
                        stdin.as_bytes(),
                        &env,
                    )
                })
            })
            .collect();
        for run in runs {
            let run = run.join().expect("hook thread");
            assert!(adapter.blocked(&run), "{run:?}");
        }
    });
    assert_eq!(stored_blocks(dir, adapter, ""), n);
}

/// A turn is told by the agent's turn id (`field`) when it sends one: a stop of the same turn
/// counts on even without `stop_hook_active`, and a stop of a new turn starts over even with it.
pub fn assert_turns_are_told_by(adapter: &Adapter, field: &str) {
    let repo = uncommitted();
    let dir = repo.path();
    let config_home = tempfile::tempdir().expect("temp config home");
    crate::trust(config_home.path(), dir, &[]);
    let fire = |active: bool, turn: &str| {
        let mut value: Value = serde_json::from_str(&payload(adapter.agent, adapter.stop, dir))
            .expect("fixture is JSON");
        value["stop_hook_active"] = Value::Bool(active);
        value[field] = Value::String(turn.to_owned());
        let stdin = value.to_string();
        let run = run_hook_in(
            config_home.path(),
            Path::new(adapter.bin),
            dir,
            stdin.as_bytes(),
            &[],
        );
        assert!(run.stdout.contains("\"decision\""), "{run:?}");
        stored_blocks(dir, adapter, "")
    };
    assert_eq!(fire(false, "turn-1"), 1);
    assert_eq!(fire(false, "turn-1"), 2, "same turn, no stop_hook_active");
    assert_eq!(fire(true, "turn-2"), 1, "a new turn");
}

/// The blocks stored in `dir` for the session of the adapter's stop fixture, or with `suffix`
/// (`+<agent id>`) for one of its subagents, the last one included while its delivery is not
/// known yet (an OpenCode block counts once delivered); 0 when nothing is stored.
pub fn stored_blocks(dir: &Path, adapter: &Adapter, suffix: &str) -> u32 {
    let Some(record) = stored_session(dir, adapter, suffix) else {
        return 0;
    };
    let counted = record["consecutive_blocks"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .expect("consecutive_blocks");
    counted + u32::from(record["undelivered_block"] == true)
}

/// The session record stored in `dir` for the session of the adapter's stop fixture (with
/// `suffix`, see [`stored_blocks`]), if any.
pub fn stored_session(dir: &Path, adapter: &Adapter, suffix: &str) -> Option<Value> {
    let stop: Value =
        serde_json::from_str(&payload(adapter.agent, adapter.stop, dir)).expect("fixture is JSON");
    let id = stop[adapter.wire.session_id]
        .as_str()
        .expect("a session id");
    let file = dir
        .join(".git/checkpoint/sessions")
        .join(format!("{}-{id}{suffix}.json", adapter.agent));
    let text = std::fs::read_to_string(&file).ok()?;
    Some(serde_json::from_str(&text).expect("a session record"))
}

/// One transcript line of `agent` saying the context holds `used` tokens.
fn usage_line(agent: &str, used: u64) -> String {
    let line = match agent {
        "claude" => serde_json::json!({"type": "assistant", "isSidechain": false, "message": {
            "model": "claude-sonnet-5", "usage": {"input_tokens": 1000,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": used - 1000}}}),
        "gemini" => serde_json::json!({"type": "gemini", "model": "gemini-3.8-flash",
            "tokens": {"input": used, "output": 5}}),
        "codex" => serde_json::json!({"type": "event_msg", "payload": {"type": "token_count",
            "info": {"last_token_usage": {"input_tokens": used}, "model_context_window": 258_400}}}),
        "copilot" => serde_json::json!({"type": "session.usage_record", "data": {"usage": {
            "model": "gpt-4.1", "inputTokens": used, "maxPromptTokens": 111_616}}}),
        other => panic!("no transcript format for {other}"),
    };
    format!("{line}\n")
}

/// One transcript line of `agent` holding the reply `text`, for agents whose stop payload names
/// no reply; `None` for the others.
fn reply_line(agent: &str, text: &str) -> Option<String> {
    let line = match agent {
        "copilot" => serde_json::json!({"type": "assistant.message", "data": {"content": text,
            "toolRequests": []}}),
        _ => return None,
    };
    Some(format!("{line}\n"))
}

/// A clean repository plus one uncommitted file that needs no tests: a deterministic block.
pub fn uncommitted() -> tempfile::TempDir {
    let repo = repo("python-passing");
    std::fs::write(repo.path().join("deploy.yml"), "replicas: 2\n").expect("write deploy.yml");
    repo
}

/// Payloads every adapter must answer with its no-op (exit 0, one stderr line): the agent's own
/// end-of-turn fixture broken in every way a pipe can break it.
pub fn bad_payloads(adapter: &Adapter, dir: &Path) -> Vec<(&'static str, Vec<u8>)> {
    let good: serde_json::Value =
        serde_json::from_str(&payload(adapter.agent, adapter.stop, dir)).expect("fixture is JSON");
    let wire = adapter.wire;
    let with = |key: &str, value: serde_json::Value| {
        let mut v = good.clone();
        v[key] = value;
        v.to_string().into_bytes()
    };
    // An agent whose payloads do not name their event is told it by their fields: without them,
    // the event is not known.
    let no_event = match wire.event_name {
        Some(key) => with(key, serde_json::Value::Null),
        None => serde_json::json!({wire.session_id: good[wire.session_id], "cwd": good["cwd"]})
            .to_string()
            .into_bytes(),
    };
    let mut huge = b"{\"pad\":\"".to_vec();
    huge.resize(33 * 1024 * 1024, b'x');
    vec![
        ("empty", Vec::new()),
        ("not json", b"Stop please".to_vec()),
        ("truncated", good.to_string().as_bytes()[..20].to_vec()),
        ("array", b"[1,2,3]".to_vec()),
        ("cwd is a number", with("cwd", serde_json::json!(7))),
        ("event is null", no_event),
        (
            "stop_hook_active is a string",
            with("stop_hook_active", serde_json::json!("yes")),
        ),
        (
            "missing cwd directory",
            with("cwd", serde_json::json!("/nonexistent/checkpoint")),
        ),
        (
            "session id escapes",
            with(wire.session_id, serde_json::json!("../../etc")),
        ),
        ("huge", huge),
    ]
}

/// A `CHECKPOINT_TESTS_COMMAND=true` that the agent's own project configuration (`file`, with
/// `text`, committed) puts into the hook's environment is the project's value, not the user's:
/// with the project trusted and `add` broken, the approved command still runs and blocks for
/// `test_add`, and the user is told the variable is held back. Returns what the user is told
/// about it, for the adapter's snapshot.
pub fn assert_project_env_is_held_back(adapter: &Adapter, file: &str, text: &str) -> String {
    let repo = repo("failing-test");
    let dir = repo.path();
    let config_home = tempfile::tempdir().expect("temp config home");
    crate::trust(config_home.path(), dir, &[]);
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    crate::git(dir, &["add", file]);
    crate::git(dir, &["commit", "-qm", "agent config"]);
    let stdin = payload(adapter.agent, adapter.stop, dir);
    let env = [("CHECKPOINT_TESTS_COMMAND", "true")];
    let bin = Path::new(adapter.bin);
    let run = run_hook_in(config_home.path(), bin, dir, stdin.as_bytes(), &env);
    assert!(adapter.blocked(&run), "{run:?}");
    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    let block = answer
        .pointer(adapter.wire.block)
        .unwrap()
        .as_str()
        .unwrap();
    assert!(block.contains("test_calc.CalcTest.test_add"), "{block}");
    let notice = answer
        .pointer(adapter.wire.notice)
        .unwrap()
        .as_str()
        .unwrap();
    assert!(
        notice.contains("CHECKPOINT_TESTS_COMMAND (from "),
        "{notice}"
    );
    // Only what is told about the variable: the rest of the notice is the trust store's.
    let told = notice.find("Checkpoint: the agent's project configuration");
    told.map_or(notice, |at| &notice[at..]).to_owned()
}

/// An edit that weakens a test gets a note with the tool's result, once per content of the
/// file, and never a block: fired as the tool-result payload `fixture` with the tool's
/// arguments naming the file in the way `input` builds them (from its absolute path). A shell
/// call, an edit of code, a file outside the repository and the file restored get nothing.
/// `fields` gives the payload's fields for an edit of the file at an absolute path. Returns the
/// note's answer, for the adapter's snapshot.
pub fn assert_edit_nudge(
    adapter: &Adapter,
    fixture: &str,
    fields: impl Fn(&str) -> Vec<(&'static str, Value)>,
) -> Value {
    let repo = repo("python-passing");
    let dir = repo.path();
    let test = dir.join("test_calc.py");
    let old = std::fs::read_to_string(&test).expect("the fixture's test file");
    let weakened = old
        .replace(
            "    def test_add(self):",
            "    @unittest.skip(\"later\")\n    def test_add(self):",
        )
        .replace("        self.assertEqual(add(2, 3), 5)\n", "        pass\n");
    assert_ne!(old, weakened, "the fixture's test file changed shape");
    std::fs::write(&test, &weakened).unwrap();
    let fire =
        |path: &Path| adapter.fire_with(dir, fixture, &fields(&path.display().to_string()), &[]);
    let run = fire(&test);
    assert_eq!(run.code, Some(0), "{run:?}");
    let answer: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    let note = answer.pointer(adapter.wire.context).and_then(Value::as_str);
    assert!(
        note.is_some_and(|n| n.contains("this edit weakened the tests")),
        "{run:?}"
    );
    assert!(answer.pointer(adapter.wire.block).is_none(), "{run:?}");
    adapter.assert_no_op(&fire(&test), 0, "the same content again");
    adapter.assert_no_op(&adapter.fire(dir, fixture), 0, "a shell call");
    std::fs::write(dir.join("calc.py"), "def add(a, b):\n    return 0\n").unwrap();
    adapter.assert_no_op(&fire(&dir.join("calc.py")), 0, "an edit of code");
    let outside = dir.join("..").join("..").join("test_calc.py");
    adapter.assert_no_op(&fire(&outside), 0, "a file outside the repository");
    std::fs::write(&test, &old).unwrap();
    adapter.assert_no_op(&fire(&test), 0, "the test restored");
    answer
}
