//! `checkpoint report` after a scripted Claude Code session driven through the real adapter
//! binary: a failing test blocked, fixed, committed, a context checkpoint at 85 %, a restart in
//! a new session. The page is checked through the DOM of a real headless Chromium (and a
//! screenshot of it is taken), the `--json` pinned by a snapshot; hostile names in a file, a
//! progress entry and the tests' output stay text.

use std::path::{Path, PathBuf};
use std::process::Command;

use checkpoint_testkit::{HookRun, git, run_hook};
use serde_json::{Value, json};

use super::{checkpoint, code};

/// The sessions of the story.
const FIRST: &str = "6f1c2a4e-0000-4000-8000-00000000a001";
const SECOND: &str = "6f1c2a4e-0000-4000-8000-00000000a002";
/// Markup and terminal escapes, as a repository or an agent could write them.
const SCRIPT: &str = "<script>document.title='owned'</script>";
const IMG: &str = "\"><img src=x onerror=alert(1)>";
const ESC: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J";

/// A transcript whose last assistant message used `tokens` of Claude's 200k window, out of the
/// worktree (in `.git/`), so it is no change of the repository's.
fn transcript(dir: &Path, name: &str, tokens: u64) -> PathBuf {
    let line = json!({
        "type": "assistant",
        "message": {
            "role": "assistant",
            "model": "claude-sonnet-5",
            "content": [{"type": "text", "text": "Working."}],
            "usage": {"input_tokens": tokens, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 5},
        },
    });
    let path = dir.join(".git").join(name);
    std::fs::write(&path, format!("{line}\n")).unwrap();
    path
}

/// One Claude Code hook event of `session` in `repo`, answered by the real adapter.
fn hook(repo: &Path, session: &str, event: &str, fields: Value) -> HookRun {
    let mut payload = json!({
        "session_id": session,
        "transcript_path": "/dev/null",
        "cwd": repo,
        "hook_event_name": event,
    });
    payload
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    let bin = &checkpoint_e2e::workspace_binaries().claude;
    let run = run_hook(bin, repo, payload.to_string().as_bytes(), &[]);
    assert_eq!(run.code, Some(0), "{event}: {run:?}");
    run
}

/// Whether the adapter blocked the stop.
fn blocked(run: &HookRun) -> bool {
    run.stdout.contains("\"decision\":\"block\"")
}

/// The scripted session; returns the repository.
fn story() -> tempfile::TempDir {
    let repo = checkpoint_testkit::repo("failing-test");
    let dir = repo.path();
    // The tests' output and a changed file's name carry markup and escapes.
    let test = std::fs::read_to_string(dir.join("test_calc.py")).unwrap();
    let test = test.replace(
        "self.assertEqual(add(2, 3), 5)",
        // Python's escapes for ESC and BEL: the failure message carries real ones.
        &format!("self.assertEqual(add(2, 3), 5, \"\\x1b]0;owned\\x07\\x1b[2J{SCRIPT}\")"),
    );
    std::fs::write(dir.join("test_calc.py"), test).unwrap();
    std::fs::write(dir.join(format!("notes{IMG}.txt")), "notes\n").unwrap();
    let low = transcript(dir, "t30.jsonl", 60_000);
    let high = transcript(dir, "t85.jsonl", 170_000);

    // The work is a task, whose name is markup too.
    let task = format!("calc {IMG}");
    let started = checkpoint(
        dir,
        &["task", "start", &task, "--steps", "fix add,commit"],
        "",
    );
    assert_eq!(code(&started), 0, "{started:?}");
    assert_eq!(code(&checkpoint(dir, &["step", "start"], "")), 0);
    hook(dir, FIRST, "SessionStart", json!({"source": "startup"}));
    hook(dir, FIRST, "UserPromptSubmit", json!({"prompt": "fix add"}));
    hook(
        dir,
        FIRST,
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "transcript_path": low}),
    );
    let first = hook(
        dir,
        FIRST,
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "Done."}),
    );
    assert!(blocked(&first), "the failing test blocks: {first:?}");
    // Fixed and committed.
    let fixed = std::fs::read_to_string(dir.join("calc.py")).unwrap();
    std::fs::write(
        dir.join("calc.py"),
        fixed.replace("return a - b\n\n\ndef sub", "return a + b\n\n\ndef sub"),
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "calc: add adds again"]);
    let progress = format!("fixed add {SCRIPT}{IMG}{ESC}");
    hook(
        dir,
        FIRST,
        "PostToolUse",
        json!({"tool_name": "Skill", "tool_input": {"skill": "checkpoint-progress", "args": progress}}),
    );
    let second = hook(
        dir,
        FIRST,
        "Stop",
        json!({"stop_hook_active": true, "last_assistant_message": "Fixed."}),
    );
    assert!(
        !blocked(&second),
        "fixed and committed, the stop is allowed: {second:?}"
    );
    // The context passes the warn threshold: a checkpoint at 85 %.
    hook(dir, FIRST, "UserPromptSubmit", json!({"prompt": "more"}));
    let warned = hook(
        dir,
        FIRST,
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "transcript_path": high}),
    );
    assert!(warned.stdout.contains("85"), "{warned:?}");
    // Then the context is compacted: a checkpoint before it.
    hook(
        dir,
        FIRST,
        "PreCompact",
        json!({"trigger": "auto", "custom_instructions": null, "transcript_path": high}),
    );
    // A new session goes on from the latest checkpoint.
    let resumed = hook(dir, SECOND, "SessionStart", json!({"source": "clear"}));
    assert!(!resumed.stdout.trim().is_empty(), "{resumed:?}");
    hook(dir, SECOND, "UserPromptSubmit", json!({"prompt": "go on"}));
    let last = hook(
        dir,
        SECOND,
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "All done."}),
    );
    assert!(!blocked(&last), "{last:?}");
    repo
}

/// The JSON with what changes from run to run (times, ids, commits, paths) replaced.
fn redacted(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                let stable = match key.as_str() {
                    "at" | "generated_at" | "since" | "turn_began" | "created_at" => "[time]",
                    "duration_ms" | "test_time_ms" => "[ms]",
                    "id" | "receipt" | "task" if field.is_string() => "[id]",
                    "base" | "commit" | "tree" | "range" | "signers" => "[commit]",
                    "worktree" => "[repo]",
                    // The tests' output, as the Python at hand prints it (checked apart).
                    "reasons" => "[the message's lines]",
                    _ => {
                        redacted(field);
                        continue;
                    }
                };
                if !field.is_null() {
                    *field = Value::String(stable.to_owned());
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redacted),
        // A receipt's id in a text (a history entry's detail).
        Value::String(text) => {
            while let Some(at) = text.find("receipt r-") {
                let id = at + "receipt ".len();
                let end = id
                    + text[id + 2..]
                        .find(|c: char| !c.is_ascii_hexdigit())
                        .unwrap_or(text.len() - id - 2)
                    + 2;
                text.replace_range(id..end, "[id]");
            }
        }
        _ => {}
    }
}

#[test]
fn a_session_s_report_shows_its_stops_tests_context_and_commits_and_only_text() {
    let repo = story();
    let dir = repo.path();
    let out = checkpoint(dir, &["report", "--json"], "");
    assert_eq!(code(&out), 0, "{out:?}");
    // Timings ("321ms") and the repository's path in messages made stable.
    let mut report: Value = serde_json::from_str(&super::stable(&out.stdout, dir)).unwrap();
    let summary = &report["summary"];
    assert_eq!(summary["sessions"], 2, "{report:#}");
    assert_eq!(summary["blocked"], 1, "{report:#}");
    assert_eq!(summary["blocks_by_reason"]["tests_failed"], 1, "{report:#}");
    assert_eq!(summary["restarts"], 1, "{report:#}");
    let first = &report["sessions"][0]["stops"][0];
    let reasons = first["reasons"].as_array().unwrap();
    assert!(
        reasons.contains(&json!(format!("AssertionError: -1 != 5 : {SCRIPT}"))),
        "the failure's output, escapes dropped: {first:#}"
    );
    let task_id = report["task"]["id"].as_str().unwrap().to_owned();
    redacted(&mut report);
    let one = checkpoint(
        dir,
        &["report", "--json", "--session", FIRST, "--since", "1h"],
        "",
    );
    let one: Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(one["sessions"].as_array().unwrap().len(), 1, "{one:#}");
    assert!(one["since"].is_string(), "{one:#}");
    let none = checkpoint(dir, &["report", "--session", "nope"], "");
    assert_eq!(code(&none), 2, "{none:?}");
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("no session nope"),
        "{none:?}"
    );
    insta::assert_json_snapshot!("report_json", report);

    // A task by its id: the report begins where the task began.
    let by_task = checkpoint(dir, &["report", "--json", "--task", &task_id], "");
    assert_eq!(code(&by_task), 0, "{by_task:?}");
    let by_task: Value = serde_json::from_slice(&by_task.stdout).unwrap();
    assert_eq!(by_task["task"]["id"], task_id.as_str(), "{by_task:#}");
    assert_eq!(
        by_task["since"], by_task["task"]["created_at"],
        "{by_task:#}"
    );
    let unknown = checkpoint(dir, &["report", "--task", "nope"], "");
    assert_ne!(code(&unknown), 0, "{unknown:?}");
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("nope"),
        "{unknown:?}"
    );

    let page_dir = tempfile::tempdir().unwrap();
    let page = page_dir.path().join("report.html");
    let out = checkpoint(dir, &["report", "-o", page.to_str().unwrap()], "");
    assert_eq!(code(&out), 0, "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("<script") && !html.contains("<img"),
        "{html}"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "nothing from the network"
    );
    in_chromium(&page);
}

/// Checks the page through the DOM Chromium builds of it, and takes a screenshot (kept as
/// `docs/report.png` with `CHECKPOINT_BLESS=1`). Without Chromium it says it did not run, and
/// fails only in CI (`.ci/run` installs it).
fn in_chromium(page: &Path) {
    if !checkpoint_testkit::has(checkpoint_testkit::Tool::Chromium) {
        return;
    }
    let profile = tempfile::tempdir().unwrap();
    let browser = |extra: &[&str]| {
        let out = Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(format!("file://{}", page.display()))
            .output()
            .expect("run chromium");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let dom = browser(&["--dump-dom"]);
    // The marks: one blocked stop, the allowed ones, the checkpoint at 85 %, the restart.
    assert_eq!(
        dom.matches("class=\"mark stop blocked\"").count(),
        1,
        "{dom}"
    );
    assert_eq!(
        dom.matches("class=\"mark stop allowed\"").count(),
        2,
        "{dom}"
    );
    assert!(
        dom.contains("checkpoint #") && dom.contains("(auto_80) at 85 %"),
        "{dom}"
    );
    assert_eq!(
        dom.matches("class=\"mark start restart\"").count(),
        1,
        "{dom}"
    );
    // The curve: a point per measure, 30 % then 85 %.
    let points: Vec<&str> = dom
        .match_indices("data-percent=\"")
        .map(|(i, _)| &dom[i + 14..i + 17])
        .collect();
    assert_eq!(points, ["30\"", "85\""], "{dom}");
    assert_eq!(dom.matches("<polyline class=\"usage\"").count(), 1, "{dom}");
    // A line at the compaction in the first session's curve, one at the `/clear` in the second's.
    assert_eq!(
        dom.matches("class=\"event compaction\"").count(),
        1,
        "{dom}"
    );
    assert_eq!(dom.matches("class=\"event clear\"").count(), 1, "{dom}");
    // The summary's numbers.
    for (id, value) in [
        ("sessions", "2"),
        ("stops", "3"),
        ("blocked", "1"),
        ("allowed", "2"),
        ("restarts", "1"),
    ] {
        let cell = format!("id=\"summary-{id}\">{value}</dd>");
        assert!(dom.contains(&cell), "{cell}: {dom}");
    }
    assert!(
        dom.contains("data-reason=\"tests_failed\">tests_failed: 1<"),
        "{dom}"
    );
    // The test runs beneath the stops, and the commit verified.
    assert!(dom.contains("<code>python3 -m unittest -q</code>"), "{dom}");
    assert!(
        dom.contains("class=\"commit ok\" data-verified=\"true\""),
        "{dom}"
    );
    // The task: its steps and the receipts of the gate's runs.
    assert!(
        dom.contains("<section id=\"task\"><h2>Task <code>calc \"&gt;&lt;img"),
        "{dom}"
    );
    assert_eq!(dom.matches("<tr class=\"step\">").count(), 2, "{dom}");
    assert_eq!(dom.matches("<tr class=\"receipt\">").count(), 2, "{dom}");
    // Hostile text stayed text: no element was injected, no escape survived.
    assert!(!dom.contains("<script") && !dom.contains("<img"), "{dom}");
    assert!(
        dom.contains("&lt;script&gt;document.title='owned'&lt;/script&gt;"),
        "{dom}"
    );
    assert!(dom.contains("&lt;img src=x onerror=alert(1)&gt;"), "{dom}");
    assert!(!dom.contains('\u{1b}') && !dom.contains('\u{7}'), "{dom}");
    assert!(
        dom.contains("<title>checkpoint report: "),
        "the title is ours: {dom}"
    );

    let shot = match std::env::var_os("CHECKPOINT_BLESS") {
        Some(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/report.png"),
        None => profile.path().join("report.png"),
    };
    browser(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1200,1600",
    ]);
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
}

/// `--open` hands the written page to the desktop's opener (`xdg-open` here, found on `PATH`),
/// and without one the page is still written, with a warning.
#[cfg(target_os = "linux")]
#[test]
fn open_hands_the_page_to_the_opener_and_does_without_one() {
    use std::os::unix::fs::PermissionsExt;
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    let config_home = tempfile::tempdir().unwrap();
    checkpoint_testkit::as_test_user(config_home.path());
    let bin = tempfile::tempdir().unwrap();
    let opened = bin.path().join("opened");
    let opener = bin.path().join("xdg-open");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > {}.part && /bin/mv {0}.part {0}\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Only git beside it: the machine's own opener stays out of reach.
    let git = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("git"))
        .find(|git| git.is_file())
        .expect("git on PATH");
    std::os::unix::fs::symlink(git, bin.path().join("git")).unwrap();
    let page = bin.path().join("page.html");
    let report_and_open = || {
        let out = super::checkpoint_command(
            config_home.path(),
            dir,
            &["report", "--open", "-o", page.to_str().unwrap()],
        )
        .env("PATH", bin.path())
        .output()
        .unwrap();
        assert_eq!(code(&out), 0, "{out:?}");
        out
    };
    report_and_open();
    // The opener runs on its own; wait for it (bounded).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !opened.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap(),
        page.to_str().unwrap()
    );

    std::fs::remove_file(&opener).unwrap();
    std::fs::remove_file(&page).unwrap();
    let out = report_and_open();
    assert!(page.exists());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("could not run xdg-open"),
        "{out:?}"
    );
}
