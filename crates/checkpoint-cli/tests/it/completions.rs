//! `checkpoint completions SHELL` and `checkpoint man`: generated from the command line, so they
//! name every command `--help` lists, down to the nested ones (`task list`).

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::process::{Command, Stdio};

use super::code;

/// `checkpoint ARGS`' stdout, asserting it exits 0.
fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_checkpoint"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        0,
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The commands the `Commands:` section of `--help` lists (without `help`).
fn listed(args: &[&str]) -> Vec<String> {
    let mut help_args = args.to_vec();
    help_args.push("--help");
    run(&help_args)
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every visible command path: `["check"]`, …, `["task", "list"]`, ….
fn commands() -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for top in listed(&[]) {
        let nested = listed(&[&top]);
        all.push(vec![top.clone()]);
        all.extend(nested.into_iter().map(|sub| vec![top.clone(), sub]));
    }
    all
}

#[test]
fn completion_scripts_name_every_command_and_bash_accepts_its_own() {
    let commands = commands();
    assert!(commands.len() > 30, "{commands:?}");
    assert!(commands.contains(&vec!["task".to_owned(), "list".to_owned()]));
    for shell in ["bash", "zsh", "fish"] {
        let script = run(&["completions", shell]);
        let missing: Vec<String> = commands
            .iter()
            .map(|path| path.last().unwrap())
            .filter(|name| !script.contains(name.as_str()))
            .cloned()
            .collect();
        assert!(missing.is_empty(), "{shell}: {missing:?} missing");
    }
    let bash = run(&["completions", "bash"]);
    // Every command path is a case of bash's dispatch: `cmd="checkpoint__subcmd__task__subcmd__list"`.
    for path in &commands {
        let case = format!(
            "cmd=\"checkpoint__subcmd__{}\"",
            path.join("__subcmd__").replace('-', "__subcmd__")
        );
        assert!(bash.contains(&case), "bash: no {case}");
    }
    let mut check = Command::new("bash")
        .arg("-n")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    check
        .stdin
        .take()
        .unwrap()
        .write_all(bash.as_bytes())
        .unwrap();
    assert!(
        check.wait().unwrap().success(),
        "bash -n rejected the script"
    );

    // Loaded into bash, it completes: `checkpoint task l<TAB>`, `checkpoint completions <TAB>`.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("checkpoint.bash");
    fs::write(&script, &bash).unwrap();
    let complete = |words: &str| {
        let line = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             _checkpoint checkpoint \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; \
             echo \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash").arg("-c").arg(line).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(complete("checkpoint task l"), "list\n");
    assert_eq!(
        complete("checkpoint completions ''"),
        "-h --help bash elvish fish powershell zsh\n"
    );
    // The settings table's keys, for `config set`, `config get` and `explain`.
    for command in ["config set", "config get", "explain"] {
        assert_eq!(
            complete(&format!("checkpoint {command} stop.ma")),
            "stop.max_blocks\n",
            "{command}"
        );
    }
    let keys = complete("checkpoint config set journal.");
    let table: Vec<&str> = (checkpoint_core::policy::config::KEYS.iter())
        .map(|key| key.name)
        .filter(|name| name.starts_with("journal."))
        .collect();
    assert_eq!(keys.split_whitespace().collect::<Vec<_>>(), table);

    let unknown = Command::new(env!("CARGO_BIN_EXE_checkpoint"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(code(&unknown), 2);
}

#[test]
fn the_manual_page_lists_every_command_and_dir_writes_one_page_each() {
    let page = run(&["man"]);
    assert!(page.starts_with(".ie \\n(.g .ds Aq"), "{page}");
    assert!(page.contains("\n.TH checkpoint 1 "), "{page}");
    let name = page.lines().skip_while(|l| *l != ".SH NAME").nth(1);
    insta::assert_snapshot!(name.unwrap_or_default(), @r"checkpoint \- The checkpoint command: run the stop gate by hand, install hooks, inspect state");
    for top in listed(&[]) {
        let reference = format!("checkpoint\\-{}(1)", top.replace('-', "\\-"));
        assert!(page.contains(&reference), "no {reference} in\n{page}");
    }

    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let said = run(&["man", "--dir", pages.to_str().unwrap()]);
    assert_eq!(
        said,
        format!("Wrote the manual pages into {}.\n", pages.display())
    );
    let written: BTreeSet<String> = fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut expected: BTreeSet<String> = commands()
        .iter()
        .map(|path| format!("checkpoint-{}.1", path.join("-")))
        .collect();
    expected.insert("checkpoint.1".into());
    let missing: Vec<&String> = expected.difference(&written).collect();
    assert!(
        missing.is_empty(),
        "{missing:?} not written; got {written:?}"
    );
    assert_eq!(
        fs::read_to_string(pages.join("checkpoint.1")).unwrap(),
        page
    );
    let list = fs::read_to_string(pages.join("checkpoint-task-list.1")).unwrap();
    assert!(list.contains("\\-\\-json"), "{list}");
}

/// `checkpoint help --help` says what `help` does, as `--help` does for every other command.
#[test]
fn help_has_help_too() {
    let help = run(&["help", "--help"]);
    assert!(
        help.starts_with("Print this message or the help of the given subcommand(s)"),
        "{help}"
    );
    assert_eq!(run(&["help", "-h"]), help);
}
