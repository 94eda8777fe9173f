//! `checkpoint config`: the effective settings of the current project and where each came from;
//! `config get KEY` prints one value and `config set KEY VALUE [--user]` edits a config file,
//! keeping its comments and layout.
//!
//! [`settings`] and [`set_value`] are the whole logic, for any front end in this crate.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use checkpoint_core::policy::config::{self, ConfigError, KEYS, Key, Origin, Setting};
use checkpoint_engine::store;
use serde::Serialize;
use toml_edit::{DocumentMut, Item, Table, Value};

use crate::args::SettingKey;
use crate::{CliError, output, project};

/// Options of `checkpoint config`.
#[derive(Debug, clap::Args)]
pub(crate) struct ConfigArgs {
    #[command(subcommand)]
    action: Option<ConfigAction>,
    /// Print JSON (a list of {key, value, origin}) instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Subcommand)]
enum ConfigAction {
    /// Print the effective value of one key, as TOML.
    Get {
        /// A key like `context.warn`, or `rule.<name>`.
        #[arg(value_parser = SettingKey, hide_possible_values = true)]
        key: String,
    },
    /// Set a key in the project's checkpoint.toml (or the user config file), keeping the file's
    /// comments; the new file is validated before it replaces the old one.
    Set {
        /// A key like `context.warn` (`checkpoint explain KEY` says what it does).
        #[arg(value_parser = SettingKey, hide_possible_values = true)]
        key: String,
        /// A TOML value (`true`, `85`, `"prompt"`); anything else is taken as a string.
        value: String,
        /// Edit the user config file instead of the project's checkpoint.toml.
        #[arg(long)]
        user: bool,
    },
}

/// `checkpoint config [get KEY | set KEY VALUE [--user]]`.
pub(crate) fn run(args: &ConfigArgs) -> Result<ExitCode, CliError> {
    let root = project::root()?;
    match &args.action {
        None if args.json => print_json(&settings(&root)?),
        None => output::out(&render(&settings(&root)?, &root)),
        Some(ConfigAction::Get { key }) => {
            let all = settings(&root)?;
            let setting = all.iter().find(|s| s.key == *key).ok_or_else(|| {
                CliError::usage(format!("unknown key {key:?}"), valid_keys_hint(key, true))
            })?;
            output::out(&setting.value_text());
        }
        Some(ConfigAction::Set { key, value, user }) => set(&root, key, value, *user)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Every setting of the project at `project_root` as the gate would load it (user file, the
/// project's checkpoint.toml, this process's `CHECKPOINT_*` variables), with its origin.
pub(crate) fn settings(project_root: &Path) -> Result<Vec<Setting>, CliError> {
    let sources = project::host().sources(project_root);
    Ok(checkpoint_engine::config::explain(&sources, project_root)?)
}

/// Sets `key` (one of [`KEYS`]) to `value` in the config file `file`, which need not exist, and
/// returns the value as written (TOML). `value` is read as a TOML value when it parses as one
/// (`true`, `85`, `"prompt"`) and as a string otherwise (`5m`, `cargo test`). The file keeps its
/// comments and layout; it is replaced atomically, and only when the new text passes
/// [`config::check_text`].
pub(crate) fn set_value(file: &Path, key: &str, value: &str) -> Result<String, CliError> {
    let row = Key::named(key).ok_or_else(|| {
        CliError::usage(format!("unknown key {key:?}"), valid_keys_hint(key, false))
    })?;
    let (section, name) = (row.section(), row.field());
    let file = resolve_link(file);
    let unchanged = |err: ConfigError| {
        CliError::new(
            err,
            format!("{} was not changed; fix it by hand", file.display()),
        )
    };
    let old = match fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(CliError::new(
                format!("{}: {e}", file.display()),
                "make it a readable UTF-8 text file",
            ));
        }
    };
    let old_text = old.as_deref().unwrap_or_default();
    config::check_text(&file, old_text).map_err(unchanged)?;
    let mut doc: DocumentMut = old_text.parse().map_err(|e: toml_edit::TomlError| {
        CliError::new(
            format!("{}: {}", file.display(), e.message()),
            "fix the file by hand",
        )
    })?;

    let mut new = value
        .parse::<Value>()
        .unwrap_or_else(|_| Value::from(value));
    new.decor_mut().clear();
    let written = new.to_string();
    if !doc.contains_key(section) {
        doc.insert(section, Item::Table(Table::new()));
    }
    let table = doc[section].as_table_like_mut().ok_or_else(|| {
        CliError::new(
            format!("{}: [{section}] is not a table", file.display()),
            "fix the file by hand",
        )
    })?;
    match table.get_mut(name).and_then(Item::as_value_mut) {
        Some(slot) => {
            // Keep the spacing and any comment around the old value.
            let decor = slot.decor().clone();
            *slot = new;
            *slot.decor_mut() = decor;
        }
        None => {
            table.insert(name, Item::Value(new));
        }
    }
    let text = doc.to_string();
    config::check_text(&file, &text).map_err(|err| {
        CliError::usage(
            format!("{key} = {written}: {}", rejected(err, key, &file, old_text)),
            format!("{} was not changed", file.display()),
        )
    })?;
    write(&file, &text, old.is_some())?;
    Ok(written)
}

/// Why the text with `key` set was refused, pointing only at what exists: the file as it is
/// (`old_text`) — not the rejected text, whose lines are not in the file. About the key being
/// set, just the reason; about another key (that the new value conflicts with), that key and
/// where the file sets it.
fn rejected(err: ConfigError, key: &str, file: &Path, old_text: &str) -> String {
    match err {
        ConfigError::Invalid {
            key: about,
            message,
            ..
        } if about == key => message,
        ConfigError::Invalid {
            key: about,
            message,
            ..
        } => match config::line_of(file, old_text, &about) {
            Some(line) => format!("{about} ({}:{line}): {message}", file.display()),
            None => format!("{about}: {message}"),
        },
        other => other.to_string(),
    }
}

/// The project's `checkpoint.toml` under `root`, to be written: refused when it is a symlink that
/// leads out of the project (an edit must not land in a file elsewhere, such as the user's).
pub(crate) fn project_file(root: &Path) -> Result<PathBuf, CliError> {
    let file = root.join(checkpoint_engine::config::PROJECT_FILE);
    let target = resolve_link(&file);
    let inside = |root: &Path| target.starts_with(root);
    if target != file && !inside(root) && !root.canonicalize().is_ok_and(|r| inside(&r)) {
        return Err(CliError::usage(
            format!(
                "{} is a link to {}, outside the project: not changed",
                file.display(),
                target.display()
            ),
            "edit the file it points to yourself, or replace the link with a file",
        ));
    }
    Ok(file)
}

/// `checkpoint config set`.
fn set(root: &Path, key: &str, value: &str, user: bool) -> Result<(), CliError> {
    let file = if user {
        project::host().user_config.ok_or_else(|| {
            CliError::new(
                "no user config directory",
                "set HOME or XDG_CONFIG_HOME to an absolute path",
            )
        })?
    } else {
        project_file(root)?
    };
    let written = set_value(&file, key, value)?;
    output::out(&set_message(key, &written, &file, root));
    // The file is valid on its own; say so when the layers together are not, or when another
    // layer still decides the value.
    match settings(root) {
        Err(err) => {
            output::warning(&err.message);
            output::hint(&format!(
                "the layers conflict; change the setting named above or run `checkpoint config set {key}` with another value"
            ));
        }
        Ok(all) => {
            let origin = all.iter().find(|s| s.key == key).map(|s| &s.origin);
            let from_file = matches!(origin, Some(Origin::File { path, .. }) if *path == file);
            if let Some(origin) = origin.filter(|_| !from_file) {
                output::warning(&format!(
                    "{key} still comes from {}",
                    origin_text(origin, root)
                ));
            }
        }
    }
    Ok(())
}

/// What `config set` and the MCP tool `checkpoint_configure` say after [`set_value`] wrote
/// `written` for `key` into `file`.
pub(crate) fn set_message(key: &str, written: &str, file: &Path, root: &Path) -> String {
    format!(
        "Set {key} = {written} in {}.",
        short_path(file, root).display()
    )
}

/// Replaces `file` with `text` atomically, keeping its permissions (a new file gets 0644).
fn write(file: &Path, text: &str, existed: bool) -> Result<(), CliError> {
    let hint = "check the permissions of the file and its directory";
    let permissions = existed
        .then(|| fs::metadata(file).ok().map(|m| m.permissions()))
        .flatten();
    store::write_atomic_sweeping(file, text.as_bytes()).map_err(|e| CliError::new(e, hint))?;
    let permissions = permissions.unwrap_or_else(|| {
        use std::os::unix::fs::PermissionsExt;
        fs::Permissions::from_mode(0o644)
    });
    fs::set_permissions(file, permissions)
        .map_err(|e| CliError::new(format!("{}: {e}", file.display()), hint))
}

/// The file a symlink at `path` points at, so that an edit keeps the link; else `path`.
fn resolve_link(path: &Path) -> PathBuf {
    let is_link = fs::symlink_metadata(path).is_ok_and(|meta| meta.is_symlink());
    if is_link {
        path.canonicalize().unwrap_or_else(|_| path.to_owned())
    } else {
        path.to_owned()
    }
}

/// One line per setting: `key = value`, aligned, then `# origin`.
pub(crate) fn render(settings: &[Setting], root: &Path) -> String {
    let assignments: Vec<String> = settings
        .iter()
        .map(|s| format!("{} = {}", s.key, s.value_text()))
        .collect();
    // Align the comments of the short lines; a long one (a rule, a long command) just gets two
    // spaces.
    let width = assignments
        .iter()
        .map(|a| a.chars().count())
        .filter(|&n| n <= 48)
        .max()
        .unwrap_or(0);
    let lines: Vec<String> = assignments
        .iter()
        .zip(settings)
        .map(|(assignment, s)| {
            let pad = width.saturating_sub(assignment.chars().count()) + 2;
            format!("{assignment}{:pad$}# {}", "", origin_text(&s.origin, root))
        })
        .collect();
    lines.join("\n")
}

/// `default`, `detected`, `checkpoint.toml:4` (a file under `root` relative to it) or
/// `env CHECKPOINT_CONTEXT_WARN`.
pub(crate) fn origin_text(origin: &Origin, root: &Path) -> String {
    match origin {
        Origin::File { path, line } => format!("{}:{line}", short_path(path, root).display()),
        other => other.to_string(),
    }
}

/// `path` relative to `root` when it is inside it.
fn short_path<'a>(path: &'a Path, root: &Path) -> &'a Path {
    path.strip_prefix(root).unwrap_or(path)
}

/// One setting as `--json` shows it.
#[derive(Debug, Serialize)]
struct SettingView {
    key: String,
    /// `null` when unset.
    value: serde_json::Value,
    origin: OriginView,
}

/// Where a value came from, as `--json` shows it.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum OriginView {
    Default,
    Detected,
    File { path: PathBuf, line: usize },
    Env { var: String },
}

fn print_json(settings: &[Setting]) {
    let views: Vec<SettingView> = settings
        .iter()
        .map(|s| SettingView {
            key: s.key.clone(),
            value: s
                .value
                .as_ref()
                .and_then(|v| serde_json::to_value(v).ok())
                .unwrap_or(serde_json::Value::Null),
            origin: match &s.origin {
                Origin::Default => OriginView::Default,
                Origin::Detected => OriginView::Detected,
                Origin::File { path, line } => OriginView::File {
                    path: path.clone(),
                    line: *line,
                },
                Origin::Env(var) => OriginView::Env { var: var.clone() },
            },
        })
        .collect();
    let json = serde_json::to_string_pretty(&views).unwrap_or_else(|_| "[]".to_owned());
    output::out(&json);
}

/// The hint after the unknown key `key`: the valid key it most likely misspells, else every
/// valid key.
pub(crate) fn valid_keys_hint(key: &str, with_rules: bool) -> String {
    let keys: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
    if let Some(meant) = config::closest(key, keys.iter().copied()) {
        return format!("did you mean `{meant}`?");
    }
    let rules = if with_rules {
        ", rule.<name>"
    } else {
        " (edit [[rule]]s in the file itself)"
    };
    format!("valid keys: {}{rules}", keys.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_value_keeps_comments_and_layout() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("checkpoint.toml");
        let text = "# Our settings.\n[tests]\ncommand = \"make test\"  # the fast suite\n\n\
                    [context]\nwarn = 80   # early\n";
        fs::write(&file, text).unwrap();
        assert_eq!(set_value(&file, "context.warn", "85").unwrap(), "85");
        assert_eq!(
            set_value(&file, "tests.command", "cargo test -q").unwrap(),
            "\"cargo test -q\""
        );
        assert_eq!(
            set_value(&file, "resume.auto", "prompt").unwrap(),
            "\"prompt\""
        );
        assert_eq!(set_value(&file, "tests.timeout", "5m").unwrap(), "\"5m\"");
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            "# Our settings.\n[tests]\ncommand = \"cargo test -q\"  # the fast suite\n\
             timeout = \"5m\"\n\n[context]\nwarn = 85   # early\n\n[resume]\nauto = \"prompt\"\n"
        );
    }

    #[test]
    fn set_value_creates_the_file_and_edits_dotted_keys() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub").join("config.toml");
        set_value(&file, "clear.auto_checkpoint", "false").unwrap();
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            "[clear]\nauto_checkpoint = false\n"
        );
        let dotted = dir.path().join("dotted.toml");
        fs::write(&dotted, "stop.max_blocks = 2\n").unwrap();
        set_value(&dotted, "stop.max_blocks", "4").unwrap();
        set_value(&dotted, "stop.capture", "true").unwrap();
        assert_eq!(
            fs::read_to_string(&dotted).unwrap(),
            "stop.max_blocks = 4\nstop.capture = true\n"
        );
    }

    #[test]
    fn set_value_refuses_unknown_keys_and_bad_values() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("checkpoint.toml");
        fs::write(&file, "[context]\nwarn = 80\n").unwrap();
        let err = set_value(&file, "context.warning", "85").unwrap_err();
        assert_eq!(err.message, "unknown key \"context.warning\"");
        assert_eq!(err.hint.unwrap(), "did you mean `context.warn`?");
        let err = set_value(&file, "rule.x", "1").unwrap_err();
        assert_eq!(err.message, "unknown key \"rule.x\"");
        assert!(err.hint.unwrap().contains("context.warn, context.critical"));
        let err = set_value(&file, "context.warn", "120").unwrap_err();
        assert_eq!(
            err.message,
            "context.warn = 120: must be at most 99, got 120"
        );
        let err = set_value(&file, "context.critical", "75").unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "context.critical = 75: context.warn ({}:2): must be below context.critical (75), \
                 got 80",
                file.display()
            )
        );
        assert_eq!(fs::read_to_string(&file).unwrap(), "[context]\nwarn = 80\n");
    }
}
