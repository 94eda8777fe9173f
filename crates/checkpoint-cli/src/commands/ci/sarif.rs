//! The test-integrity findings as a SARIF 2.1.0 log, for code scanning: one rule per kind of
//! weakening, one result per finding about a file, at its line. Findings about a test command
//! (the old tests failing on the new code, a count that dropped) have no place in a file and
//! are in the summary only.

use checkpoint_core::decide::Decision;
use checkpoint_core::integrity::{Finding, FindingKind};
use serde_json::{Value, json};

use super::verdict;
use crate::error::CliError;

/// The SARIF log of `decision`'s findings, as text.
pub(crate) fn log(decision: &Decision) -> Result<String, CliError> {
    let (findings, blocking) = verdict::findings(decision);
    let located: Vec<&Finding> = (findings.iter())
        .filter(|f| !f.kind.is_about_a_command())
        .collect();
    let mut kinds: Vec<FindingKind> = located.iter().map(|f| f.kind).collect();
    kinds.sort();
    kinds.dedup();
    let rules: Vec<Value> = (kinds.iter())
        .map(|kind| {
            json!({
                "id": rule_id(*kind),
                "name": rule_id(*kind),
                "shortDescription": {"text": rule_text(*kind)},
            })
        })
        .collect();
    let level = if blocking { "error" } else { "warning" };
    let results: Vec<Value> = (located.iter())
        .map(|finding| {
            let mut location = json!({
                "artifactLocation": {"uri": uri(&finding.file), "uriBaseId": "%SRCROOT%"},
            });
            if let Some(line) = finding.line {
                location["region"] = json!({"startLine": line});
            }
            json!({
                "ruleId": rule_id(finding.kind),
                "ruleIndex": kinds.iter().position(|k| *k == finding.kind),
                "level": level,
                "message": {"text": finding.description},
                "locations": [{"physicalLocation": location}],
            })
        })
        .collect();
    let sarif = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "checkpoint",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&sarif).map_err(|e| CliError::bug(format!("SARIF: {e}")))
}

/// The rule's id: the kind's name in the JSON (`marker_added`).
fn rule_id(kind: FindingKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{kind:?}"))
}

/// What a rule finds, in a few words.
fn rule_text(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::TestFileDeleted => "A test file was deleted",
        FindingKind::RenamedOutOfDiscovery => "A test file was moved out of the runner's reach",
        FindingKind::MarkerAdded => "A skip, ignore or focus marker was added to a test",
        FindingKind::TestRemoved => "A test was removed",
        FindingKind::AssertionRemoved => "An assertion was removed",
        FindingKind::ExpectedValueChanged => "An expected value changed along with the code",
        FindingKind::RunnerConfigNarrowed => "The runner's configuration now runs fewer tests",
        FindingKind::ProtectedFileChanged => "A protected file changed",
        FindingKind::TestCountDropped => "Fewer tests ran",
        FindingKind::PassesWithoutTheChange => "The changed tests pass without the change",
        FindingKind::OldTestsFail => "The tests as they were fail on the new code",
        _ => "The tests were weakened",
    }
}

/// A repository-relative path as a URI reference: each segment percent-encoded where URIs need.
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_uri_references() {
        assert_eq!(uri("tests/test calc#1.py"), "tests/test%20calc%231.py");
        assert_eq!(uri("ünï.py"), "%C3%BCn%C3%AF.py");
    }
}
