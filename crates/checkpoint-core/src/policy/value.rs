//! The value types of settings, and how each is written: in a configuration file (TOML, read
//! with serde, so that a type error reads like serde's), in a `CHECKPOINT_*` variable (text), and
//! back as TOML for `explain`.
//!
//! A [`Kind`] ties one of these types to the type of the [`Policy`](super::Policy) field it
//! fills; the settings table names a kind per key.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserializer, IntoDeserializer};
use serde::{Deserialize, Serialize};

/// A setting's value type: how a file and a variable write it, and how `explain` shows it.
pub(crate) trait Kind {
    /// The type of the policy field it fills.
    type Field: 'static;

    /// Reads the value from a configuration file.
    fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self::Field, D::Error>;

    /// Reads the value of a `CHECKPOINT_*` variable; the error says what is wrong with it.
    fn parse(text: &str) -> Result<Self::Field, String>;

    /// The field as it would be written in a file; `None` when it is unset.
    fn to_toml(field: &Self::Field) -> Option<toml::Value>;

    /// What the values look like, for the settings reference.
    fn values() -> String;
}

/// A command line; a blank one means none (so `tests.command = ""` turns detection off).
pub(crate) struct Command;

impl Command {
    fn from_text(text: String) -> Option<String> {
        Some(text).filter(|command| !command.trim().is_empty())
    }
}

impl Kind for Command {
    type Field = Option<String>;

    fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        String::deserialize(d).map(Command::from_text)
    }

    fn parse(text: &str) -> Result<Option<String>, String> {
        Ok(Command::from_text(text.to_owned()))
    }

    fn to_toml(field: &Option<String>) -> Option<toml::Value> {
        field.clone().map(toml::Value::String)
    }

    fn values() -> String {
        "a command; `\"\"` for none".to_owned()
    }
}

/// What a duration looks like, for error messages.
const DURATION_SHAPE: &str = r#"a duration like "120s", "2m" or "1m30s""#;

/// A positive duration written like `"120s"`, `"2m"`, `"1m30s"`, `"500ms"` or `"30d"` (jiff's
/// friendly or ISO 8601 format; a day is 24 hours).
/// `checkpoint report --since` reads its option the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval(pub Duration);

impl FromStr for Interval {
    type Err = String;

    fn from_str(s: &str) -> Result<Interval, String> {
        let text = s.trim();
        let parsed = text
            .parse::<jiff::SignedDuration>()
            .ok()
            .or_else(|| {
                let span: jiff::Span = text.parse().ok()?;
                span.to_duration(jiff::SpanRelativeTo::days_are_24_hours())
                    .ok()
            })
            .ok_or_else(|| format!("expected {DURATION_SHAPE}, got {s:?}"))?;
        if parsed.is_positive() {
            Ok(Interval(parsed.unsigned_abs()))
        } else {
            Err(format!("must be a positive duration, got {s:?}"))
        }
    }
}

impl<'de> Deserialize<'de> for Interval {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl de::Visitor<'_> for Visitor {
            type Value = Interval;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(DURATION_SHAPE)
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Interval, E> {
                v.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_str(Visitor)
    }
}

impl Kind for Interval {
    type Field = Duration;

    fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        <Interval as Deserialize>::deserialize(d).map(|Interval(duration)| duration)
    }

    fn parse(text: &str) -> Result<Duration, String> {
        text.parse().map(|Interval(duration)| duration)
    }

    fn to_toml(field: &Duration) -> Option<toml::Value> {
        Some(toml::Value::String(render_duration(*field)))
    }

    fn values() -> String {
        "a positive duration".to_owned()
    }
}

/// A duration the way a config file writes it: in the largest unit that measures it exactly,
/// `"2m"`, `"90s"`, `"30d"`, `"1500ms"` (as a user writes a timeout, and echoed so).
pub(crate) fn render_duration(d: Duration) -> String {
    const UNITS: [(&str, u128); 7] = [
        ("d", 86_400_000_000_000),
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ];
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    let (unit, size) = (UNITS.into_iter())
        .find(|(_, size)| nanos.is_multiple_of(*size))
        .unwrap_or(("ns", 1));
    format!("{}{unit}", nanos / size)
}

/// A flag: `true` or `false` in a file; a variable may also say `1`/`0` or `yes`/`no` (the words
/// of [`Switch`] other than `prompt`).
impl Kind for bool {
    type Field = bool;

    fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        <bool as Deserialize>::deserialize(d)
    }

    fn parse(text: &str) -> Result<bool, String> {
        match text.parse() {
            Ok(Switch::On) => Ok(true),
            Ok(Switch::Off) => Ok(false),
            _ => Err(format!("expected true/false, 1/0 or yes/no, got {text:?}")),
        }
    }

    fn to_toml(field: &bool) -> Option<toml::Value> {
        Some(toml::Value::Boolean(*field))
    }

    fn values() -> String {
        "`true` or `false`".to_owned()
    }
}

/// A whole number in `MIN..=MAX`, held in a policy field of type `T`.
pub(crate) struct Count<T, const MIN: u32, const MAX: u32>(PhantomData<T>);

/// A policy field that holds a bounded whole number: a count (`u32`), a percent (`u8`) or a
/// size that may be left unset (`Option<u64>`).
pub(crate) trait Whole: 'static {
    /// The largest number the field holds; a [`Count`]'s `MAX` may not exceed it.
    const LIMIT: u32;

    /// The field holding `n`, which is at most [`Whole::LIMIT`].
    fn from_count(n: u32) -> Self;

    /// The number held; `None` when unset.
    fn count(&self) -> Option<u64>;
}

impl Whole for u32 {
    const LIMIT: u32 = u32::MAX;

    fn from_count(n: u32) -> u32 {
        n
    }

    fn count(&self) -> Option<u64> {
        Some(u64::from(*self))
    }
}

impl Whole for u8 {
    const LIMIT: u32 = u8::MAX as u32;

    fn from_count(n: u32) -> u8 {
        u8::try_from(n).unwrap_or(u8::MAX)
    }

    fn count(&self) -> Option<u64> {
        Some(u64::from(*self))
    }
}

impl Whole for Option<u64> {
    const LIMIT: u32 = u32::MAX;

    fn from_count(n: u32) -> Option<u64> {
        Some(u64::from(n))
    }

    fn count(&self) -> Option<u64> {
        *self
    }
}

impl<T: Whole, const MIN: u32, const MAX: u32> Count<T, MIN, MAX> {
    /// `n` when it is in range.
    fn check(n: u32) -> Result<T, String> {
        const {
            assert!(
                MIN <= MAX && MAX <= T::LIMIT,
                "the field cannot hold the bounds"
            )
        };
        if n > MAX {
            Err(format!("must be at most {MAX}, got {n}"))
        } else if n < MIN {
            Err(format!("must be at least {MIN}, got {n}"))
        } else {
            Ok(T::from_count(n))
        }
    }
}

impl<T: Whole, const MIN: u32, const MAX: u32> Kind for Count<T, MIN, MAX> {
    type Field = T;

    fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        u32::deserialize(d).and_then(|n| Self::check(n).map_err(de::Error::custom))
    }

    fn parse(text: &str) -> Result<T, String> {
        let n: u64 =
            (text.trim().parse()).map_err(|_| format!("expected a whole number, got {text:?}"))?;
        let n = u32::try_from(n).map_err(|_| format!("must be at most {MAX}, got {n}"))?;
        Self::check(n)
    }

    fn to_toml(field: &T) -> Option<toml::Value> {
        let n = field.count()?;
        Some(toml::Value::Integer(i64::try_from(n).unwrap_or(i64::MAX)))
    }

    fn values() -> String {
        format!("{MIN}..={MAX}")
    }
}

/// A setting that can be on, off, or left to the user: written `true`, `false` or `"prompt"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Switch {
    /// Do it (`true`).
    #[default]
    On,
    /// Do not do it (`false`).
    Off,
    /// Ask the user first (`"prompt"`).
    Prompt,
}

impl Switch {
    /// What the switch is called in a config file: `true`, `false` or `prompt`.
    pub fn name(self) -> &'static str {
        match self {
            Switch::On => "true",
            Switch::Off => "false",
            Switch::Prompt => "prompt",
        }
    }
}

impl From<bool> for Switch {
    fn from(on: bool) -> Switch {
        if on { Switch::On } else { Switch::Off }
    }
}

impl FromStr for Switch {
    type Err = String;

    /// `true`/`1`/`yes`, `false`/`0`/`no` or `prompt`, in any case and with spaces around: the
    /// one list of words for a switch, in files and variables alike (a flag takes the first two).
    fn from_str(s: &str) -> Result<Switch, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(Switch::On),
            "false" | "0" | "no" => Ok(Switch::Off),
            "prompt" => Ok(Switch::Prompt),
            _ => Err(format!("expected true, false or \"prompt\", got {s:?}")),
        }
    }
}

impl Serialize for Switch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Switch::On => s.serialize_bool(true),
            Switch::Off => s.serialize_bool(false),
            Switch::Prompt => s.serialize_str("prompt"),
        }
    }
}

impl<'de> Deserialize<'de> for Switch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Switch, D::Error> {
        struct Visitor;

        impl de::Visitor<'_> for Visitor {
            type Value = Switch;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false or \"prompt\"")
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Switch, E> {
                Ok(Switch::from(v))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Switch, E> {
                v.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_any(Visitor)
    }
}

impl Kind for Switch {
    type Field = Switch;

    fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Switch, D::Error> {
        <Switch as Deserialize>::deserialize(d)
    }

    fn parse(text: &str) -> Result<Switch, String> {
        text.parse()
            .map_err(|_| format!("expected true/false, 1/0, yes/no or prompt, got {text:?}"))
    }

    fn to_toml(field: &Switch) -> Option<toml::Value> {
        toml::Value::try_from(field).ok()
    }

    fn values() -> String {
        "`true`, `false` or `\"prompt\"`".to_owned()
    }
}

/// A list of repository-relative path globs (`*` does not cross `/`, `**` does), each checked
/// when read. A variable holds a TOML array (`["spec/**", "e2e/**"]`) or one glob.
pub(crate) struct Globs;

impl Globs {
    fn check(globs: Vec<String>) -> Result<Vec<String>, String> {
        for glob in &globs {
            super::rules::path_glob(glob)
                .map_err(|e| format!("bad glob {glob:?}: {}", e.kind()))?;
        }
        Ok(globs)
    }
}

impl Kind for Globs {
    type Field = Vec<String>;

    fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        Vec::<String>::deserialize(d)
            .and_then(|globs| Globs::check(globs).map_err(de::Error::custom))
    }

    fn parse(text: &str) -> Result<Vec<String>, String> {
        Globs::check(list_text(text)?)
    }

    fn to_toml(field: &Vec<String>) -> Option<toml::Value> {
        Some(toml::Value::Array(
            field.iter().cloned().map(toml::Value::String).collect(),
        ))
    }

    fn values() -> String {
        "a list of globs (a variable: a TOML array or one glob)".to_owned()
    }
}

/// A list in a variable's value: a TOML array of strings, or one item (none when blank).
fn list_text(text: &str) -> Result<Vec<String>, String> {
    let text = text.trim();
    if text.starts_with('[') {
        let value = toml::de::DeValue::parse(text).map_err(|e| e.message().to_owned())?;
        Vec::<String>::deserialize(toml::de::ValueDeserializer::from(value))
            .map_err(|e| e.message().to_owned())
    } else if text.is_empty() {
        Ok(Vec::new())
    } else {
        Ok(vec![text.to_owned()])
    }
}

/// [`Kind`] for a unit enum that serde reads by its snake_case name, in a file and in a
/// variable alike; `$values` lists the names for `checkpoint config` and the book.
macro_rules! named_kind {
    ($ty:ty, $values:expr) => {
        impl Kind for $ty {
            type Field = $ty;

            fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                <$ty as Deserialize>::deserialize(d)
            }

            fn parse(text: &str) -> Result<$ty, String> {
                <$ty as Deserialize>::deserialize(text.trim().into_deserializer())
                    .map_err(|e: de::value::Error| e.to_string())
            }

            fn to_toml(field: &$ty) -> Option<toml::Value> {
                toml::Value::try_from(field).ok()
            }

            fn values() -> String {
                $values.to_owned()
            }
        }
    };
}

/// How the change set is read from git.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GitBackend {
    /// The git CLI when `git` is on `PATH` (measured faster), else gitoxide.
    #[default]
    Auto,
    /// `git status --porcelain=v2` in a subprocess.
    Cli,
    /// gitoxide in-process; needs no `git` binary.
    Gix,
}

named_kind!(
    GitBackend,
    "`auto` (the git CLI when on `PATH`, else gitoxide), `cli` or `gix`"
);

/// Which tests a stop runs for a test command the gate recognises (the engine's `select` module chooses them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestSelect {
    /// Only those the changed files can affect (Cargo packages, Python test modules); the whole
    /// command when in doubt.
    #[default]
    Affected,
    /// The whole command, always.
    All,
}

named_kind!(
    TestSelect,
    "`affected` (the tests the changes can affect, where the command is recognised) or `all`"
);

/// What the gate does with test-integrity findings (see [`crate::integrity`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntegrityMode {
    /// Findings block the stop.
    #[default]
    Block,
    /// Findings are shown to the user; the stop is allowed.
    Warn,
    /// No analysis.
    Off,
}

named_kind!(
    IntegrityMode,
    "`block`, `warn` (allowed, the user is told) or `off`"
);

/// When a check runs under `stop.profile = "claims"` (under the default profile every check
/// runs at every stop).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckClass {
    /// At every stop.
    #[default]
    Fast,
    /// Only at a stop whose final message claims completion (and whenever the commit gate
    /// needs it: a turn that committed gated files).
    Full,
}

named_kind!(
    CheckClass,
    "`fast` (every stop) or `full` (under `stop.profile = \"claims\"`, only at a claimed completion)"
);

/// Which checks a stop runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopProfile {
    /// Every check and the tests at every stop.
    #[default]
    Every,
    /// `fast` checks at every stop; `full` ones (the tests by default) only when the agent's
    /// final message claims completion ([`crate::claims::claims`]).
    Claims,
}

named_kind!(
    StopProfile,
    "`every` (all checks at every stop) or `claims` (`full` checks only at a claimed completion)"
);

/// A list of phrases (words separated by spaces), matched as whole words, ignoring case. A
/// variable holds a TOML array (`["done", "all tests pass"]`) or one phrase.
pub(crate) struct Phrases;

impl Phrases {
    fn check(phrases: Vec<String>) -> Result<Vec<String>, String> {
        match phrases.iter().find(|p| crate::claims::words(p).is_empty()) {
            Some(bad) => Err(format!("phrase {bad:?} has no words")),
            None => Ok(phrases),
        }
    }
}

impl Kind for Phrases {
    type Field = Vec<String>;

    fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        Vec::<String>::deserialize(d).and_then(|p| Phrases::check(p).map_err(de::Error::custom))
    }

    fn parse(text: &str) -> Result<Vec<String>, String> {
        Phrases::check(list_text(text)?)
    }

    fn to_toml(field: &Vec<String>) -> Option<toml::Value> {
        Globs::to_toml(field)
    }

    fn values() -> String {
        "a list of phrases, whole words, any case (a variable: a TOML array or one phrase)"
            .to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_support::Sources;

    #[test]
    fn durations_in_every_documented_shape() {
        for (text, expected) in [
            ("120s", Duration::from_secs(120)),
            ("2m", Duration::from_secs(120)),
            ("1m30s", Duration::from_secs(90)),
            ("500ms", Duration::from_millis(500)),
            (" 1h ", Duration::from_secs(3600)),
            ("30d", Duration::from_secs(30 * 86_400)),
            ("2s", Duration::from_secs(2)),
        ] {
            let Interval(parsed) = text.parse().unwrap();
            assert_eq!(parsed, expected, "{text}");
        }
    }

    #[test]
    fn durations_render_as_they_are_written() {
        for (duration, text) in [
            (Duration::from_secs(120), "2m"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_secs(30 * 86_400), "30d"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::from_secs(86_400 + 3600), "25h"),
            (Duration::from_nanos(2_001), "2001ns"),
        ] {
            assert_eq!(render_duration(duration), text);
            let Interval(parsed) = text.parse().unwrap();
            assert_eq!(parsed, duration, "{text}");
        }
    }

    #[test]
    fn one_list_of_words_for_switches_and_flags() {
        for (word, switch) in [
            ("true", Switch::On),
            (" YES ", Switch::On),
            ("1", Switch::On),
            ("False", Switch::Off),
            ("no", Switch::Off),
            ("0", Switch::Off),
            ("Prompt", Switch::Prompt),
        ] {
            assert_eq!(word.parse(), Ok(switch), "{word:?}");
            assert_eq!(<Switch as Kind>::parse(word), Ok(switch), "{word:?}");
            let flag = <bool as Kind>::parse(word).ok();
            assert_eq!(
                flag.map(Switch::from),
                Some(switch).filter(|s| *s != Switch::Prompt)
            );
        }
        assert_eq!(
            <bool as Kind>::parse("prompt"),
            Err(r#"expected true/false, 1/0 or yes/no, got "prompt""#.to_owned())
        );
    }

    /// `resume.auto` of a project file that sets it to `value`, a TOML value.
    fn resume_auto(value: &str) -> Switch {
        Sources::project(&format!("[resume]\nauto = {value}\n"))
            .policy()
            .resume
            .auto
    }

    #[test]
    fn switches_in_files_and_env() {
        let auto = resume_auto;
        assert_eq!(auto("true"), Switch::On);
        assert_eq!(auto("false"), Switch::Off);
        assert_eq!(auto("\"prompt\""), Switch::Prompt);
        assert_eq!(auto("\"true\""), Switch::On);
        assert_eq!(auto("\"false\""), Switch::Off);

        let env = |value: &str| {
            Sources::new(None, None)
                .env(&[("CHECKPOINT_CLEAR_AUTO_CHECKPOINT", value)])
                .policy()
                .clear
                .auto_checkpoint
        };
        for (value, expected) in [
            ("true", Switch::On),
            ("1", Switch::On),
            ("YES", Switch::On),
            ("false", Switch::Off),
            ("0", Switch::Off),
            ("no", Switch::Off),
            ("prompt", Switch::Prompt),
            (" PROMPT ", Switch::Prompt),
        ] {
            assert_eq!(env(value), expected, "{value:?}");
        }

        assert_eq!(
            serde_json::to_string(&[Switch::On, Switch::Off, Switch::Prompt]).unwrap(),
            r#"[true,false,"prompt"]"#
        );
        assert_eq!(Switch::default(), Switch::On);
        assert_eq!("prompt".parse(), Ok(Switch::Prompt));
        assert_eq!(
            "ask".parse::<Switch>(),
            Err(r#"expected true, false or "prompt", got "ask""#.to_owned())
        );
    }

    #[test]
    fn files_and_variables_share_the_switch_words() {
        let auto = |value: &str| resume_auto(&format!("{value:?}"));
        assert_eq!(auto("yes"), Switch::On);
        assert_eq!(auto("0"), Switch::Off);
        assert_eq!(auto(" Prompt "), Switch::Prompt);
    }

    #[test]
    fn switch_errors() {
        let f = Sources::project("[resume]\nauto = 1\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: resume.auto: invalid type: integer `1`, expected true, false or "prompt""#);
        let f = Sources::project("[clear]\nauto_checkpoint = \"ask\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: clear.auto_checkpoint: expected true, false or "prompt", got "ask""#);
        let f = Sources::new(None, None).env(&[("CHECKPOINT_AUTO_RESUME", "sometimes")]);
        insta::assert_snapshot!(f.error(), @r#"CHECKPOINT_AUTO_RESUME: expected true/false, 1/0, yes/no or prompt, got "sometimes""#);
    }

    #[test]
    fn out_of_range_values() {
        let f = Sources::project("stop.max_blocks = 101\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:1: stop.max_blocks: must be at most 100, got 101");
        let f = Sources::project("[stop]\nmax_blocks = -1\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: stop.max_blocks: invalid value: integer `-1`, expected u32");
        let f = Sources::project("[tests]\ntimeout = \"0s\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: tests.timeout: must be a positive duration, got "0s""#);
        let f = Sources::project("[stop]\ncapture_interval = \"-5m\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: stop.capture_interval: must be a positive duration, got "-5m""#);
        let f = Sources::project("[tests]\ntimeout = \"5 parsecs\"\n");
        insta::assert_snapshot!(f.error(), @r#"/repo/checkpoint.toml:2: tests.timeout: expected a duration like "120s", "2m" or "1m30s", got "5 parsecs""#);
        let f = Sources::project("[git]\nbackend = \"svn\"\n");
        insta::assert_snapshot!(f.error(), @"/repo/checkpoint.toml:2: git.backend: unknown variant `svn`, expected one of `auto`, `cli`, `gix`");
    }
}
