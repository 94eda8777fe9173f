//! How the page writes what it is given: escaped ([`escape`]), times in UTC, the names of
//! verdicts and of the records' enums.

use checkpoint_core::sanitize;
use checkpoint_engine::session::activity::StopVerdict;
use jiff::Timestamp;
use serde::Serialize;

/// `text` fit for HTML text and attribute values: control and bidirectional-text characters
/// dropped (an ESC sequence loses its ESC, see [`sanitize::text`]), and `&`, `<`, `>`, `"` and
/// `'` written as character references.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in sanitize::text(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A time as the page shows it: UTC, to the second.
pub(super) fn time(at: Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M:%S").to_string()
}

/// What a verdict is called on the page.
pub(super) fn verdict_name(verdict: StopVerdict) -> (&'static str, &'static str) {
    match verdict {
        StopVerdict::Allowed => ("allowed", "allowed"),
        StopVerdict::Blocked => ("blocked", "blocked"),
        StopVerdict::AllowedByCap => ("allowed_by_cap", "allowed by the cap"),
    }
}

/// `items` (file or test names), each escaped in its `<code>`, comma-separated.
pub(super) fn code_list(items: &[String]) -> String {
    let escaped: Vec<String> = items.iter().map(|item| escape(item)).collect();
    format!("<code>{}</code>", escaped.join("</code>, <code>"))
}

/// The name a record's enum value has in the JSON (`step_done`, `passed`): its serde name.
pub(crate) fn wire_name(value: &impl Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_escapes_as_markup_or_terminal_control() {
        let hostile = "a<script>alert(1)</script>\"><img src=x onerror=alert(1)>'&\u{1b}]0;t\u{7}\u{1b}[2J\u{202e}z";
        let escaped = escape(hostile);
        assert_eq!(
            escaped,
            "a&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\
             &#39;&amp;]0;t[2Jz"
        );
        assert!(!escaped.contains(['<', '>', '"', '\'', '\u{1b}']));
    }
}
