//! Editing the `hooks` of an agent's settings file, a JSON object laid out as the agent's
//! [`HooksLayout`] says: `{"hooks": {"<Event>": [{"matcher"?, "hooks": [handler, …]}, …]}, …}`
//! (Claude Code's, which Gemini CLI and Codex share), or `{"version": N, "hooks": {"<event>":
//! [handler, …]}}`. Everything else in the file, and every handler that is not ours, stays as it
//! is and where it is.
//!
//! Numbers are kept as they were written: one that `serde_json` would write differently (a float
//! like `1.50` or `1e3`, an integer beyond 64 bits) or cannot hold (`1e400`) is held as its raw
//! text behind [`RAW_NUMBER`] and written back unchanged. Duplicate keys are refused, not merged.

use std::io;

use checkpoint_core::agent::HooksLayout;
use serde::Serialize;
use serde::de::{Deserializer as _, MapAccess, Visitor};
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A settings file's content: its top-level object.
pub(crate) type Settings = Map<String, Value>;

/// Why a settings file is not edited. Every message is one line.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SettingsError {
    /// Not strict JSON.
    #[error("not strict JSON ({0}); comments and trailing commas are not allowed")]
    Syntax(serde_json::Error),
    /// An object has a key twice (which one counts differs between programs).
    #[error("{} has the key {key:?} twice; remove one", place(at))]
    DuplicateKey {
        /// Where the object is, e.g. `hooks`; empty for the top level.
        at: String,
        /// The key.
        key: String,
    },
    /// Valid JSON, but some part of it does not have the shape hooks need.
    #[error("{} is not {expected}", place(at))]
    Shape {
        /// Where, e.g. `hooks.Stop[0]`; empty for the top level.
        at: String,
        /// What it should be, e.g. `an object`.
        expected: &'static str,
    },
}

/// `at` for a message: ``the top level`` or `` `hooks.Stop` ``.
fn place(at: &str) -> String {
    if at.is_empty() {
        "the top level".to_owned()
    } else {
        format!("`{at}`")
    }
}

fn shape(at: &str, expected: &'static str) -> SettingsError {
    SettingsError::Shape {
        at: at.to_owned(),
        expected,
    }
}

/// Parses a settings file: strict JSON whose top level is an object, without duplicate keys;
/// numbers keep their text.
pub(crate) fn parse(text: &str) -> Result<Settings, SettingsError> {
    let raw: &RawValue = serde_json::from_str(text).map_err(SettingsError::Syntax)?;
    match exact(raw, "")? {
        Value::Object(settings) => Ok(settings),
        _ => Err(shape("", "an object")),
    }
}

/// The prefix of a string that stands for a number written as the rest of it, for numbers that
/// `serde_json` would not write back as they were. A string cannot start with it by accident: it
/// begins with a NUL.
const RAW_NUMBER: &str = "\0checkpoint-raw-number:";

/// `raw`, valid JSON at `at`, as a value whose numbers write back as they were.
fn exact(raw: &RawValue, at: &str) -> Result<Value, SettingsError> {
    let text = raw.get();
    let child = |key: &str| match at {
        "" => key.to_owned(),
        _ => format!("{at}.{key}"),
    };
    // `raw` was validated as a whole, so only a duplicate key can fail below.
    let value = match text.as_bytes().first() {
        Some(b'{') => {
            let entries = serde_json::Deserializer::from_str(text)
                .deserialize_map(EntriesVisitor)
                .map_err(SettingsError::Syntax)?;
            let mut map = Map::with_capacity(entries.len());
            for (key, raw) in entries {
                let value = exact(raw, &child(&key))?;
                if map.insert(key.clone(), value).is_some() {
                    return Err(SettingsError::DuplicateKey {
                        at: at.to_owned(),
                        key,
                    });
                }
            }
            Value::Object(map)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> =
                serde_json::from_str(text).map_err(SettingsError::Syntax)?;
            let items = items.into_iter().enumerate();
            Value::Array(
                items
                    .map(|(index, raw)| exact(raw, &format!("{at}[{index}]")))
                    .collect::<Result<_, _>>()?,
            )
        }
        // A number `serde_json` cannot hold (`1e400`) or would write differently stays text.
        Some(b'-' | b'0'..=b'9') => match serde_json::from_str::<serde_json::Number>(text) {
            Ok(number) if number.to_string() == text => Value::Number(number),
            _ => Value::String(format!("{RAW_NUMBER}{text}")),
        },
        _ => serde_json::from_str(text).map_err(SettingsError::Syntax)?,
    };
    Ok(value)
}

/// An object's entries in order, duplicates included, each value unparsed.
struct EntriesVisitor;

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = Vec<(String, &'de RawValue)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(entries)
    }
}

/// Makes `handlers` (event name, handler) the only handlers in `settings` that `ours` recognises,
/// one per event: the first of ours in an event is replaced where it stands, the others are
/// removed, and an event without one of ours gets a new one at its end (in `layout`'s matcher
/// groups, a new matcher-less group). Matcher groups, events and the `hooks` object left empty by
/// a removal go with it; in a versioned layout, the `version` is written with the first handler
/// and goes when nothing else is left. Returns the events that lost their handlers of ours
/// without a replacement.
///
/// With an error, `settings` may be partly edited: edit a copy.
pub(crate) fn set_ours(
    settings: &mut Settings,
    layout: HooksLayout,
    ours: impl Fn(&Value) -> bool,
    handlers: &[(&str, Value)],
) -> Result<Vec<String>, SettingsError> {
    if handlers.is_empty() && !settings.contains_key("hooks") {
        return Ok(Vec::new());
    }
    let version = layout.version();
    if let Some((key, version)) = version.filter(|_| !handlers.is_empty())
        && !settings.contains_key(key)
    {
        settings.shift_insert(0, key.to_owned(), version.into());
    }
    let grouped = layout.grouped();
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| shape("hooks", "an object"))?;
    let mut removed = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let at = format!("hooks.{event}");
        let groups = groups
            .as_array_mut()
            .ok_or_else(|| shape(&at, "an array"))?;
        let replacement = handlers
            .iter()
            .find_map(|(name, handler)| (name == event).then_some(handler));
        let found = if grouped {
            edit_event(groups, &at, &ours, replacement)?
        } else {
            let mut found = false;
            edit_handlers(groups, &ours, replacement, &mut found);
            found
        };
        match replacement {
            Some(handler) if !found => groups.push(entry(grouped, handler)),
            None if found => removed.push(event.clone()),
            _ => {}
        }
    }
    hooks.retain(|event, groups| !(removed.contains(event) && is_empty_array(groups)));
    for (event, handler) in handlers {
        if !hooks.contains_key(*event) {
            hooks.insert(
                (*event).to_owned(),
                Value::Array(vec![entry(grouped, handler)]),
            );
        }
    }
    if hooks.is_empty() && !removed.is_empty() {
        settings.shift_remove("hooks");
        if let Some((key, _)) = version
            && settings.len() == 1
        {
            settings.shift_remove(key);
        }
    }
    Ok(removed)
}

/// What an event's list holds for `handler`: a matcher-less group of it, or the handler itself.
fn entry(grouped: bool, handler: &Value) -> Value {
    if grouped {
        group(handler)
    } else {
        handler.clone()
    }
}

/// Replaces the first handler of ours in an event's `groups` with `replacement` and removes the
/// others (all of them without a replacement), then the groups that this left empty. Returns whether
/// there was any handler of ours.
fn edit_event(
    groups: &mut Vec<Value>,
    at: &str,
    ours: &impl Fn(&Value) -> bool,
    replacement: Option<&Value>,
) -> Result<bool, SettingsError> {
    let mut found = false;
    let mut emptied = Vec::with_capacity(groups.len());
    for (index, group) in groups.iter_mut().enumerate() {
        let at = format!("{at}[{index}]");
        let group = group
            .as_object_mut()
            .ok_or_else(|| shape(&at, "an object"))?;
        let Some(handlers) = group.get_mut("hooks") else {
            emptied.push(false);
            continue;
        };
        let handlers = handlers
            .as_array_mut()
            .ok_or_else(|| shape(&format!("{at}.hooks"), "an array"))?;
        let before = handlers.len();
        edit_handlers(handlers, ours, replacement, &mut found);
        emptied.push(before > 0 && handlers.is_empty());
    }
    let mut emptied = emptied.into_iter();
    groups.retain(|_| !emptied.next().unwrap_or(false));
    Ok(found)
}

/// Replaces the first handler of ours in `handlers` with `replacement` (keeping the environment
/// prefix the user gave its command), unless one was `found` before, and removes the others (all of them without a replacement); sets `found` when there
/// was any handler of ours.
fn edit_handlers(
    handlers: &mut Vec<Value>,
    ours: &impl Fn(&Value) -> bool,
    replacement: Option<&Value>,
    found: &mut bool,
) {
    handlers.retain_mut(|handler| {
        if !ours(handler) {
            return true;
        }
        let keep = match replacement {
            Some(new) if !*found => {
                *handler = super::adapter::keeping_env_prefix(handler, new);
                true
            }
            _ => false,
        };
        *found = true;
        keep
    });
}

/// A matcher-less group holding one handler.
fn group(handler: &Value) -> Value {
    let mut group = Map::new();
    group.insert("hooks".to_owned(), Value::Array(vec![handler.clone()]));
    Value::Object(group)
}

fn is_empty_array(value: &Value) -> bool {
    value.as_array().is_some_and(Vec::is_empty)
}

/// `settings` as JSON laid out like `original`: on one line when that was one line of JSON (not
/// just `{}`), ending with a newline when it did; else pretty with a final newline, indented by
/// its first indented line when that is a tab or up to eight spaces, else by two spaces.
pub(crate) fn render(settings: &Settings, original: Option<&str>) -> String {
    let one_line = original.filter(|text| {
        let text = text.trim();
        !text.contains('\n') && text != "{}" && !text.is_empty()
    });
    let mut out = Vec::new();
    match one_line {
        Some(_) => write_json(settings, &mut out, CompactFormatter),
        None => {
            let indent = original.and_then(indent_of).unwrap_or("  ");
            write_json(
                settings,
                &mut out,
                PrettyFormatter::with_indent(indent.as_bytes()),
            );
        }
    }
    let mut text = String::from_utf8(out).expect("serde_json writes UTF-8");
    if one_line.is_none_or(|text| text.ends_with('\n')) {
        text.push('\n');
    }
    text
}

/// Writes `settings` into `out` with `layout`, numbers as they were read.
fn write_json(settings: &Settings, out: &mut Vec<u8>, layout: impl Formatter) {
    let mut serializer = serde_json::Serializer::with_formatter(
        out,
        RawNumbers {
            layout,
            string: None,
        },
    );
    settings
        .serialize(&mut serializer)
        .expect("a JSON object with string keys serializes into memory");
}

/// A formatter that lays JSON out as `layout` does and writes the strings standing for numbers
/// ([`RAW_NUMBER`]) as those numbers.
struct RawNumbers<F> {
    layout: F,
    /// The current string as it would be written between its quotes, while one is written.
    string: Option<Vec<u8>>,
}

/// Delegates formatter methods to the layout's formatter.
macro_rules! layout {
    ($($method:ident $(($arg:ident: $ty:ty))?),* $(,)?) => {$(
        fn $method<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)?) -> io::Result<()> {
            self.layout.$method(w $(, $arg)?)
        }
    )*};
}

impl<F: Formatter> Formatter for RawNumbers<F> {
    layout! {
        begin_array, end_array, begin_array_value(first: bool), end_array_value,
        begin_object, end_object, begin_object_key(first: bool), begin_object_value,
        end_object_value,
    }

    fn begin_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.string = Some(Vec::new());
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        match &mut self.string {
            Some(string) => string.extend_from_slice(fragment.as_bytes()),
            None => w.write_all(fragment.as_bytes())?,
        }
        Ok(())
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        match &mut self.string {
            Some(string) => CompactFormatter.write_char_escape(string, escape),
            None => CompactFormatter.write_char_escape(w, escape),
        }
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        let string = self.string.take().unwrap_or_default();
        // The marker's NUL is written escaped; the number after it needs no escapes.
        let marker = serde_json::to_string(RAW_NUMBER)?;
        let marker = &marker.as_bytes()[1..marker.len() - 1];
        match string.strip_prefix(marker) {
            Some(number) => w.write_all(number),
            None => {
                w.write_all(b"\"")?;
                w.write_all(&string)?;
                w.write_all(b"\"")
            }
        }
    }
}

/// The indentation step of a pretty-printed file: the leading whitespace of its first indented
/// line, if that looks like one step.
fn indent_of(text: &str) -> Option<&str> {
    let line = text.lines().find(|line| line.starts_with([' ', '\t']))?;
    let indent = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
    let one_step = indent == "\t" || (indent.len() <= 8 && indent.bytes().all(|b| b == b' '));
    one_step.then_some(indent)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ours(handler: &Value) -> bool {
        handler["command"]
            .as_str()
            .is_some_and(|command| command.ends_with("/ours"))
    }

    fn settings(value: Value) -> Settings {
        match value {
            Value::Object(settings) => settings,
            other => panic!("not an object: {other}"),
        }
    }

    fn handler(command: &str) -> Value {
        json!({"type": "command", "command": command})
    }

    fn install(value: Value) -> Value {
        let mut edited = settings(value);
        let handlers = [
            ("Stop", handler("/new/ours")),
            ("Prompt", handler("/new/ours")),
        ];
        set_ours(&mut edited, HooksLayout::MatcherGroups, ours, &handlers).unwrap();
        Value::Object(edited)
    }

    fn uninstall(value: Value) -> (Value, Vec<String>) {
        let mut edited = settings(value);
        let removed = set_ours(&mut edited, HooksLayout::MatcherGroups, ours, &[]).unwrap();
        (Value::Object(edited), removed)
    }

    #[test]
    fn installs_into_nothing_and_again_changes_nothing() {
        let once = install(json!({}));
        assert_eq!(
            once.to_string(),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/new/ours"}]}],"Prompt":[{"hooks":[{"type":"command","command":"/new/ours"}]}]}}"#
        );
        let twice = install(once.clone());
        assert_eq!(twice.to_string(), once.to_string());
    }

    #[test]
    fn replaces_ours_in_place_and_keeps_everything_else_in_order() {
        let before = json!({
            "z": 1,
            "hooks": {
                "Pre": [{"matcher": "Bash", "hooks": [handler("/x/guard")]}],
                "Stop": [
                    {"hooks": [handler("/x/first"), handler("/old/ours"), handler("/x/last")]},
                    {"hooks": [handler("/older/ours")]},
                    {"hooks": [handler("/x/after")]}
                ]
            },
            "a": {"y": 1, "b": 2}
        });
        assert_eq!(
            install(before).to_string(),
            json!({
                "z": 1,
                "hooks": {
                    "Pre": [{"matcher": "Bash", "hooks": [handler("/x/guard")]}],
                    "Stop": [
                        {"hooks": [handler("/x/first"), handler("/new/ours"), handler("/x/last")]},
                        {"hooks": [handler("/x/after")]}
                    ],
                    "Prompt": [{"hooks": [handler("/new/ours")]}]
                },
                "a": {"y": 1, "b": 2}
            })
            .to_string()
        );
    }

    #[test]
    fn install_drops_ours_from_events_it_no_longer_handles() {
        let before = json!({"hooks": {"Old": [{"hooks": [handler("/old/ours")]}]}});
        let after = install(before);
        assert_eq!(after["hooks"].get("Old"), None);
        assert!(after["hooks"].get("Stop").is_some());
    }

    #[test]
    fn uninstall_removes_only_ours_and_what_it_emptied() {
        let before = json!({
            "hooks": {
                "Stop": [
                    {"hooks": [handler("/a/ours"), handler("/x/keep")]},
                    {"matcher": "", "hooks": [handler("/b/ours")]},
                    {"hooks": []}
                ],
                "Prompt": [{"hooks": [handler("/a/ours")]}],
                "Empty": []
            },
            "other": true
        });
        let (after, removed) = uninstall(before);
        assert_eq!(removed, ["Stop", "Prompt"]);
        assert_eq!(
            after.to_string(),
            json!({
                "hooks": {
                    "Stop": [{"hooks": [handler("/x/keep")]}, {"hooks": []}],
                    "Empty": []
                },
                "other": true
            })
            .to_string()
        );
    }

    #[test]
    fn uninstall_after_install_restores_the_file() {
        let original = json!({"theme": "dark", "hooks": {"Stop": [{"hooks": [handler("/x/k")]}]}});
        let (after, _) = uninstall(install(original.clone()));
        assert_eq!(after.to_string(), original.to_string());
        let (after, _) = uninstall(install(json!({"theme": "dark"})));
        assert_eq!(after.to_string(), r#"{"theme":"dark"}"#);
    }

    const VERSIONED: HooksLayout = HooksLayout::Versioned {
        version: 1,
        command_key: "command",
        timeout_key: "timeout",
    };

    /// In a versioned file the handlers stand in the event's list; the version comes with the
    /// first and goes with the last when nothing else is left.
    #[test]
    fn versioned_files_list_handlers_directly() {
        let handlers = [("stop", handler("/new/ours"))];
        let mut edited = settings(json!({}));
        set_ours(&mut edited, VERSIONED, ours, &handlers).unwrap();
        assert_eq!(
            Value::Object(edited.clone()).to_string(),
            r#"{"version":1,"hooks":{"stop":[{"type":"command","command":"/new/ours"}]}}"#
        );
        let mut again = edited.clone();
        set_ours(&mut again, VERSIONED, ours, &handlers).unwrap();
        assert_eq!(again, edited);

        let mut theirs = settings(json!({"version": 1, "hooks": {"stop": [
            handler("/x/theirs"), handler("/old/ours"), handler("/older/ours")]}}));
        set_ours(&mut theirs, VERSIONED, ours, &handlers).unwrap();
        assert_eq!(
            Value::Object(theirs.clone()).to_string(),
            json!({"version": 1, "hooks": {"stop": [handler("/x/theirs"), handler("/new/ours")]}})
                .to_string()
        );
        let removed = set_ours(&mut theirs, VERSIONED, ours, &[]).unwrap();
        assert_eq!(removed, ["stop"]);
        assert_eq!(
            Value::Object(theirs).to_string(),
            json!({"version": 1, "hooks": {"stop": [handler("/x/theirs")]}}).to_string()
        );
        set_ours(&mut edited, VERSIONED, ours, &[]).unwrap();
        assert!(edited.is_empty(), "{edited:?}");
    }

    /// Qwen Code rewrites a settings file without its `$version`: install writes it with the
    /// first handler, in matcher groups, and uninstall takes it away with the last.
    #[test]
    fn a_versioned_settings_file_keeps_matcher_groups() {
        let layout = HooksLayout::VersionedMatcherGroups {
            key: "$version",
            version: 4,
        };
        let handlers = [("Stop", handler("/new/ours"))];
        let mut edited = settings(json!({}));
        set_ours(&mut edited, layout, ours, &handlers).unwrap();
        assert_eq!(
            Value::Object(edited.clone()).to_string(),
            json!({"$version": 4, "hooks": {"Stop": [{"hooks": [handler("/new/ours")]}]}})
                .to_string()
        );
        let mut kept = settings(json!({"hooks": {}, "$version": 5, "model": {}}));
        set_ours(&mut kept, layout, ours, &handlers).unwrap();
        assert_eq!(kept["$version"], 5, "the agent's own version is kept");
        set_ours(&mut edited, layout, ours, &[]).unwrap();
        assert!(edited.is_empty(), "{edited:?}");
    }

    #[test]
    fn uninstall_without_hooks_changes_nothing() {
        let (after, removed) = uninstall(json!({"a": 1, "hooks": {}}));
        assert_eq!(after.to_string(), r#"{"a":1,"hooks":{}}"#);
        assert!(removed.is_empty());
        let (after, _) = uninstall(json!({"a": 1}));
        assert_eq!(after.to_string(), r#"{"a":1}"#);
    }

    #[test]
    fn wrong_shapes_are_named() {
        let cases = [
            (json!({"hooks": []}), "`hooks` is not an object"),
            (
                json!({"hooks": {"Stop": {}}}),
                "`hooks.Stop` is not an array",
            ),
            (
                json!({"hooks": {"X": [1]}}),
                "`hooks.X[0]` is not an object",
            ),
            (
                json!({"hooks": {"X": [{"hooks": {}}]}}),
                "`hooks.X[0].hooks` is not an array",
            ),
        ];
        for (value, message) in cases {
            let err =
                set_ours(&mut settings(value), HooksLayout::MatcherGroups, ours, &[]).unwrap_err();
            assert_eq!(err.to_string(), message);
        }
    }

    #[test]
    fn only_strict_json_objects_parse() {
        for text in [
            "{\"a\": 1,}",
            "// hooks\n{}",
            "{\"a\": /* x */ 1}",
            "[]",
            "",
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(!err.contains('\n'), "{err}");
        }
        assert_eq!(
            parse("[1]").unwrap_err().to_string(),
            "the top level is not an object"
        );
        assert!(parse(" {\"a\": [1]}\n").is_ok());
    }

    /// Numbers `serde_json` would rewrite (big integers became floats) are written back exactly.
    #[test]
    fn numbers_are_kept_exactly() {
        let text = "{\n  \"id\": 123456789012345678901234567890,\n  \"x\": [1.50, -0.0, 1e3, 2E-7, \
                    18446744073709551615, -9223372036854775808, 0.1, 7, 1e400],\n  \"s\": \"1.50\\n\\u0000\"\n}\n";
        let settings = parse(text).unwrap();
        let mut expected = serde_json::to_string_pretty(&settings).unwrap();
        expected.push('\n');
        assert_ne!(expected, text, "serde_json alone rewrites them");
        assert_eq!(
            render(&settings, Some(text)),
            "{\n  \"id\": 123456789012345678901234567890,\n  \"x\": [\n    1.50,\n    -0.0,\n    1e3,\n    \
             2E-7,\n    18446744073709551615,\n    -9223372036854775808,\n    0.1,\n    7,\n    1e400\n  ],\n  \
             \"s\": \"1.50\\n\\u0000\"\n}\n"
        );
    }

    /// A key twice in one object is refused, naming where (programs disagree on which one counts).
    #[test]
    fn duplicate_keys_are_refused() {
        let cases = [
            (
                r#"{"a": 1, "a": 2}"#,
                r#"the top level has the key "a" twice; remove one"#,
            ),
            (
                r#"{"hooks": {"Stop": [{"hooks": [], "hooks": []}]}}"#,
                r#"`hooks.Stop[0]` has the key "hooks" twice; remove one"#,
            ),
            (
                r#"{"hooks": {"Stop": [], "Stop": [1]}}"#,
                r#"`hooks` has the key "Stop" twice; remove one"#,
            ),
        ];
        for (text, message) in cases {
            assert_eq!(parse(text).unwrap_err().to_string(), message);
        }
        assert!(parse(r#"{"a": {"b": 1}, "b": {"a": 1}}"#).is_ok());
    }

    #[test]
    fn renders_with_the_files_indentation() {
        let value = settings(json!({"a": [1]}));
        assert_eq!(render(&value, None), "{\n  \"a\": [\n    1\n  ]\n}\n");
        assert_eq!(
            render(&value, Some("{\n    \"b\": 1\n}")),
            "{\n    \"a\": [\n        1\n    ]\n}\n"
        );
        assert_eq!(
            render(&value, Some("{\n\t\"b\": 1\n}")),
            "{\n\t\"a\": [\n\t\t1\n\t]\n}\n"
        );
        for unusual in [
            "{\"b\": [1,\n                      2]}",
            "{\n\t \"b\": 1}",
            "{}\n",
        ] {
            assert_eq!(render(&value, Some(unusual)), render(&value, None));
        }
    }

    /// A file of one line stays one line (with its final newline, if it had one); its numbers
    /// keep their text.
    #[test]
    fn one_line_files_stay_one_line() {
        let text = "{\"b\": 1.50, \"n\": 123456789012345678901234567890}";
        let mut value = parse(text).unwrap();
        value.insert("a".into(), json!([1, {"c": "d"}]));
        let one_line = "{\"b\":1.50,\"n\":123456789012345678901234567890,\"a\":[1,{\"c\":\"d\"}]}";
        assert_eq!(render(&value, Some(text)), one_line);
        assert_eq!(
            render(&value, Some(&format!("  {text}\n"))),
            format!("{one_line}\n")
        );
    }
}
