//! Completion claims: whether an agent's final message says the work is done (`stop.claims`,
//! see [`crate::checks`]).

/// The phrases that make a final message a completion claim by default (`stop.claims`).
pub fn default_claims() -> Vec<String> {
    [
        "done",
        "finished",
        "complete",
        "completed",
        "implemented",
        "fixed",
        "resolved",
        "tests pass",
        "tests passed",
        "tests are passing",
        "ready for review",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The words of `text`, lowercase: its runs of letters and digits.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `message` claims completion: one of `phrases` appears in it as whole words in a row,
/// ignoring case ("All tests pass." has "tests pass"; "undone" has no "done"). A claim that is
/// not one ("not done yet") only makes the stop check more.
pub fn claims(message: &str, phrases: &[String]) -> bool {
    let said = words(message);
    phrases.iter().any(|phrase| {
        let phrase = words(phrase);
        !phrase.is_empty() && said.windows(phrase.len()).any(|w| w == phrase.as_slice())
    })
}
