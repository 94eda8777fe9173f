//! The book's command-line reference (`docs/src/cli.md`) is generated from the clap definition,
//! so it cannot drift from `checkpoint --help`: the test below compares the two, and
//! `UPDATE_BOOK=1` rewrites the chapter.

use std::path::Path;

use clap::CommandFactory;

use crate::Cli;

/// The chapter: an index of the commands, then each command's `--help` text, depth first.
fn reference() -> String {
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    let mut commands = Vec::new();
    collect(&cli, "checkpoint", &mut commands);
    let mut text = String::from(
        "# Command-line reference\n\n<!-- generated from the clap definition by \
         crates/checkpoint-cli/src/book.rs: UPDATE_BOOK=1 cargo test -p checkpoint-gate book -->\n\n\
         | command | what it does |\n|---|---|\n",
    );
    for (path, command) in &commands[1..] {
        let about = command
            .get_about()
            .map(ToString::to_string)
            .unwrap_or_default();
        text.push_str(&format!("| [`{path}`](#{}) | {about} |\n", anchor(path)));
    }
    for (path, command) in &commands {
        let help = command.clone().render_long_help().to_string();
        let help: Vec<&str> = help.lines().map(str::trim_end).collect();
        text.push_str(&format!(
            "\n## `{path}`\n\n```text\n{}\n```\n",
            help.join("\n").trim_end()
        ));
    }
    text
}

/// `command` at `path`, then its visible subcommands', depth first.
fn collect(command: &clap::Command, path: &str, into: &mut Vec<(String, clap::Command)>) {
    into.push((path.to_owned(), command.clone()));
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        collect(sub, &format!("{path} {}", sub.get_name()), into);
    }
}

/// The anchor mdBook gives the heading `` `path` ``: lower case, spaces as dashes.
fn anchor(path: &str) -> String {
    path.replace(' ', "-")
}

/// `docs/src/cli.md` is [`reference()`]; `UPDATE_BOOK=1` rewrites it.
#[test]
fn book_cli_reference_is_the_help() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/cli.md");
    let expected = reference();
    if std::env::var_os("UPDATE_BOOK").is_some() {
        std::fs::write(&path, &expected).unwrap();
    } else {
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == expected,
            "docs/src/cli.md differs from `checkpoint --help`; run \
             `UPDATE_BOOK=1 cargo test -p checkpoint-gate book` and commit it"
        );
    }
}
