//! The agents' transcript formats as the gate still reads them by [`Agent`], until it is handed
//! the agent's home and asks its [`TranscriptFormat`] instead. Each agent's home (its adapter
//! crate) owns the same rules; this copy goes when the gate no longer names agents.

use serde_json::Value;

use crate::agent::{Agent, LineUsage, TranscriptFormat};

/// A format without records: no usage, no replies.
const NONE: ByAgent = ByAgent(Agent::Cli);

/// The format of `agent`'s transcript ([`NONE`] for an agent without one).
pub(super) fn format(agent: Agent) -> &'static dyn TranscriptFormat {
    const CLAUDE: ByAgent = ByAgent(Agent::Claude);
    const GEMINI: ByAgent = ByAgent(Agent::Gemini);
    const CODEX: ByAgent = ByAgent(Agent::Codex);
    match agent {
        Agent::Claude => &CLAUDE,
        Agent::Gemini => &GEMINI,
        Agent::Codex => &CODEX,
        _ => &NONE,
    }
}

/// One agent's transcript format.
pub(super) struct ByAgent(Agent);

impl TranscriptFormat for ByAgent {
    fn line_usage(&self, line: &str) -> Option<LineUsage> {
        line_usage(self.0, line)
    }

    fn reply_text(&self, line: &str) -> Option<String> {
        reply_text(self.0, line)
    }

    fn default_window(&self, model: Option<&str>) -> u64 {
        match self.0 {
            Agent::Gemini => 1_048_576,
            _ => {
                let model = model.unwrap_or_default();
                if model.contains("[1m]") || model.contains("opus-5") {
                    1_000_000
                } else {
                    200_000
                }
            }
        }
    }

    fn window_from_earlier_record(&self) -> bool {
        self.0 == Agent::Codex
    }
}

fn usage(used: u64, window: Option<u64>, model: Option<String>) -> LineUsage {
    LineUsage::Usage {
        used,
        window,
        model,
    }
}

/// Reads one line of `agent`'s transcript.
fn line_usage(agent: Agent, line: &str) -> Option<LineUsage> {
    // Cheap pre-filter: most lines are not usage records and need no JSON parse.
    let marker = match agent {
        Agent::Claude => {
            if line.contains("compact_boundary") {
                "compact_boundary"
            } else {
                "\"usage\""
            }
        }
        Agent::Gemini => "\"tokens\"",
        Agent::Codex => {
            if line.contains("token_usage_record") {
                "token_usage_record"
            } else {
                "token_count"
            }
        }
        _ => return None,
    };
    if !line.contains(marker) {
        return None;
    }
    let v: Value = serde_json::from_str(line).ok()?;
    match agent {
        Agent::Claude => claude_line(&v),
        Agent::Gemini => {
            (v["type"] == "gemini").then_some(())?;
            let used = v["tokens"]["input"].as_u64()?;
            Some(usage(used, None, v["model"].as_str().map(str::to_owned)))
        }
        Agent::Codex if v["type"] == "token_usage_record" => {
            let used = v["payload"]["usage"]["input_tokens"].as_u64()?;
            Some(usage(used, None, None))
        }
        Agent::Codex => {
            let info = (v["payload"]["type"] == "token_count").then(|| &v["payload"]["info"])?;
            let used = info["last_token_usage"]["input_tokens"].as_u64()?;
            Some(usage(used, info["model_context_window"].as_u64(), None))
        }
        _ => None,
    }
}

fn claude_line(v: &Value) -> Option<LineUsage> {
    if v["isSidechain"] == true {
        return None;
    }
    if v["type"] == "system" && v["subtype"] == "compact_boundary" {
        return Some(LineUsage::Compacted(
            v["compactMetadata"]["postTokens"].as_u64(),
        ));
    }
    let message = &v["message"];
    if v["type"] != "assistant" || message["model"] == "<synthetic>" {
        return None;
    }
    let usage_of = &message["usage"];
    let part = |key: &str| usage_of[key].as_u64().unwrap_or(0);
    usage_of["input_tokens"].as_u64()?;
    let used = part("input_tokens")
        + part("cache_creation_input_tokens")
        + part("cache_read_input_tokens");
    Some(usage(
        used,
        None,
        message["model"].as_str().map(str::to_owned),
    ))
}

/// The assistant text one transcript line carries, if any.
fn reply_text(agent: Agent, line: &str) -> Option<String> {
    let marker = match agent {
        Agent::Claude | Agent::Codex => "\"assistant\"",
        Agent::Gemini => "\"gemini\"",
        _ => return None,
    };
    if !line.contains(marker) {
        return None;
    }
    let v: Value = serde_json::from_str(line).ok()?;
    let texts = |parts: &Value, kind: &str| -> String {
        parts
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["type"] == kind)
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let text = match agent {
        Agent::Claude if v["type"] == "assistant" && v["isSidechain"] != true => {
            texts(&v["message"]["content"], "text")
        }
        Agent::Gemini if v["type"] == "gemini" => v["content"].as_str()?.to_owned(),
        Agent::Codex
            if v["type"] == "response_item"
                && v["payload"]["type"] == "message"
                && v["payload"]["role"] == "assistant" =>
        {
            texts(&v["payload"]["content"], "output_text")
        }
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}
