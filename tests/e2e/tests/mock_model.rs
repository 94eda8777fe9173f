//! The `mock-model` binary as a process: port discovery, step consumption, side calls that do
//! not consume steps, the exhausted reply, `before` actions and the JSONL log.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use checkpoint_e2e::scenario::{EXHAUSTED_REPLY, Scenario, Step, Usage};
use serde_json::{Value, json};

/// Kills the server when the test ends, pass or fail.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One HTTP/1.1 POST with `Connection: close`; returns the status line's code and the body.
fn post(port: u16, path: &str, headers: &[(&str, &str)], body: &Value) -> (u16, String) {
    let body = body.to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let code = head.split(' ').nth(1).unwrap().parse().unwrap();
    (code, body.to_owned())
}

#[test]
fn serves_a_scenario_and_logs_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let scenario_path = dir.path().join("scenario.json");
    let scenario = Scenario::new([Step::reply("STEP_ONE")
        .write("sub/a.txt", "A")
        .run("cp sub/a.txt b.txt")
        .usage(Usage {
            input_tokens: 5,
            cache_read_input_tokens: 170_000,
            ..Usage::default()
        })]);
    std::fs::write(&scenario_path, serde_json::to_string(&scenario).unwrap()).unwrap();
    let log_path = dir.path().join("log.jsonl");
    let port_file = dir.path().join("port");

    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_mock-model"))
            .arg("--scenario")
            .arg(&scenario_path)
            .arg("--log")
            .arg(&log_path)
            .arg("--root")
            .arg(&root)
            .arg("--port-file")
            .arg(&port_file)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .strip_prefix("LISTENING ")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&port_file).unwrap(),
        port.to_string()
    );

    // Gemini's router call: JSON fitting the schema, no step consumed.
    let router = json!({"contents": [], "generationConfig": {"responseMimeType": "application/json",
        "responseJsonSchema": {"type": "object", "properties": {
            "complexity_reasoning": {"type": "string"},
            "complexity_score": {"type": "integer", "minimum": 1, "maximum": 100}}}}});
    let (code, body) = post(
        port,
        "/v1beta/models/gemini-2.5-flash-lite:generateContent",
        &[],
        &router,
    );
    assert_eq!(code, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let text = answer["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    let routed: Value = serde_json::from_str(text).unwrap();
    assert_eq!(routed["complexity_score"], 1);

    // The first real turn gets step one, after its actions ran in the root.
    let turn = json!({"model": "claude-x", "stream": true, "tools": [{"name": "Bash"}],
                      "messages": [{"role": "user", "content": "hi"}]});
    let (code, sse) = post(
        port,
        "/v1/messages?beta=true",
        &[("x-api-key", "secret")],
        &turn,
    );
    assert_eq!(code, 200);
    assert!(sse.contains(r#""text":"STEP_ONE""#), "{sse}");
    assert!(sse.contains(r#""cache_read_input_tokens":170000"#), "{sse}");
    assert!(sse.contains(r#""model":"claude-x""#), "{sse}");
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "A");

    // Codex compaction: not a step.
    let (code, sse) = post(
        port,
        "/v1/responses",
        &[("x-codex-turn-metadata", r#"{"request_kind":"compaction"}"#)],
        &json!({"model": "gpt", "stream": true, "input": []}),
    );
    assert_eq!(code, 200);
    assert!(sse.contains("event: response.completed"), "{sse}");

    // The steps have run out: the fixed reply, with the last step's usage.
    let (_, body) = post(
        port,
        "/v1beta/models/g:streamGenerateContent?alt=sse",
        &[],
        &json!({}),
    );
    let chunk: Value = serde_json::from_str(body.trim().strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(
        chunk["candidates"][0]["content"]["parts"][0]["text"],
        EXHAUSTED_REPLY
    );
    assert_eq!(chunk["usageMetadata"]["promptTokenCount"], 170_005);

    let (code, _) = post(port, "/nope", &[], &json!({}));
    assert_eq!(code, 404);

    let log: Vec<Value> = std::fs::read_to_string(&log_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary: Vec<(String, String, Value, bool)> = log
        .iter()
        .map(|r| {
            (
                r["api"].as_str().unwrap().to_owned(),
                r["kind"].as_str().unwrap().to_owned(),
                r["step"].clone(),
                r["exhausted"].as_bool().unwrap(),
            )
        })
        .collect();
    let s = |a: &str, k: &str, step: Value, ex: bool| (a.to_owned(), k.to_owned(), step, ex);
    assert_eq!(
        summary,
        [
            s("gemini", "router", Value::Null, false),
            s("anthropic", "turn", json!(0), false),
            s("open_ai", "compaction", Value::Null, false),
            s("gemini", "turn", Value::Null, true),
            s("unknown", "unknown", Value::Null, false),
        ]
    );
    let turn_entry = &log[1];
    assert_eq!(turn_entry["path"], "/v1/messages");
    assert_eq!(turn_entry["query"], "beta=true");
    assert_eq!(turn_entry["headers"]["x-api-key"], "<redacted>");
    assert_eq!(turn_entry["body"], turn);
    assert_eq!(turn_entry["actions"].as_array().unwrap().len(), 2);
    assert_eq!(turn_entry["actions"][1]["ok"], true);
}
