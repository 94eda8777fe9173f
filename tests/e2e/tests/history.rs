//! `checkpoint history` on a transcript the real Claude Code wrote: a session, without the gate,
//! whose model writes a file with the `Write` tool and says "Done." without running a test
//! counts as one claim that never ran a test, not gated.

use std::process::Command;

use checkpoint_e2e::scenario::{Scenario, Step};
use checkpoint_e2e::{Agent, Session, workspace_binaries};
use serde_json::Value;

#[test]
fn claude_claims_done_without_a_test_and_history_says_never_ran() {
    let Some(mut session) = Session::new(Agent::Claude) else {
        return;
    };
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    let sub = dir.join("sub.py");
    let scenario = Scenario::new([
        Step::reply("Adding sub.").write_file(&sub, "def sub(a, b):\n    return a - b\n"),
        Step::reply("Done."),
    ]);
    // `-p` allows the shell tool only; the file tool too here.
    let mut args = session.headless_args("add sub");
    args.extend(["--allowedTools".to_owned(), "Write".to_owned()]);
    let result = session.run_args(dir, &args, None, scenario);
    let summary = result.summary();
    assert!(result.status.success(), "{summary}");
    assert!(sub.exists(), "the Write tool wrote the file\n{summary}");

    let out = Command::new(&workspace_binaries().checkpoint)
        .args(["history", "--agent", "claude", "--json"])
        .current_dir(dir)
        .env("HOME", session.home())
        .env("CLAUDE_CONFIG_DIR", session.home().join(".claude"))
        .output()
        .expect("run checkpoint history");
    assert!(out.status.success(), "{out:?}");
    let counts: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let total = &counts["total"];
    assert_eq!(
        counts["agents"][0]["transcripts"], 1,
        "{counts:#}\n{summary}"
    );
    assert_eq!(total["claims"], 1, "{counts:#}\n{summary}");
    assert_eq!(total["verification"]["never_ran"], 1, "{counts:#}");
    assert_eq!(total["gate"]["not_gated"], 1, "{counts:#}");
}
