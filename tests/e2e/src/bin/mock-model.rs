//! `mock-model`: the scripted model server as a standalone process, for driving an agent CLI by
//! hand or from a script.
//!
//! ```text
//! mock-model --scenario FILE --log FILE [--root DIR] [--port N] [--port-file FILE]
//! ```
//!
//! Listens on 127.0.0.1 (`--port 0`, the default, picks a free port), prints `LISTENING <port>`
//! on stdout (and writes the bare port to `--port-file`), then serves until killed. Turn
//! requests play the scenario's steps; `before` actions run in `--root`, else the scenario's
//! `root`, else the current directory. Every request is appended to `--log` as one JSON line.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use checkpoint_e2e::mock::MockServer;
use checkpoint_e2e::scenario::Scenario;

/// Parsed command line.
struct Args {
    scenario: PathBuf,
    log: PathBuf,
    root: Option<PathBuf>,
    port: u16,
    port_file: Option<PathBuf>,
}

const USAGE: &str =
    "usage: mock-model --scenario FILE --log FILE [--root DIR] [--port N] [--port-file FILE]";

fn parse_args() -> Result<Args, String> {
    let mut scenario = None;
    let mut log = None;
    let mut root = None;
    let mut port = 0;
    let mut port_file = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(flag) = args.next() {
        let flag = flag.to_string_lossy().into_owned();
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--scenario" => scenario = Some(PathBuf::from(value()?)),
            "--log" => log = Some(PathBuf::from(value()?)),
            "--root" => root = Some(PathBuf::from(value()?)),
            "--port-file" => port_file = Some(PathBuf::from(value()?)),
            "--port" => {
                let text = value()?;
                port = text
                    .to_str()
                    .and_then(|t| t.parse().ok())
                    .ok_or_else(|| format!("--port: not a port number: {}", text.display()))?;
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(Args {
        scenario: scenario.ok_or_else(|| format!("--scenario is required\n{USAGE}"))?,
        log: log.ok_or_else(|| format!("--log is required\n{USAGE}"))?,
        root,
        port,
        port_file,
    })
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let scenario = Scenario::from_file(&args.scenario)?;
    let root = match args.root.or_else(|| scenario.root.clone()) {
        Some(root) => root,
        None => std::env::current_dir().map_err(|e| format!("current dir: {e}"))?,
    };
    let server = MockServer::start(args.port).map_err(|e| format!("listen: {e}"))?;
    server
        .begin(scenario, &root, &args.log)
        .map_err(|e| format!("log {}: {e}", args.log.display()))?;
    if let Some(path) = &args.port_file {
        // Written whole then renamed, so a reader polling for the file never sees half of it.
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, server.port().to_string())
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| format!("port file {}: {e}", path.display()))?;
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "LISTENING {}", server.port())
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("stdout: {e}"))?;
    drop(stdout);
    server.wait();
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // Nothing useful remains to be done if stderr is gone.
            let _ = writeln!(std::io::stderr(), "mock-model: {message}");
            ExitCode::from(2)
        }
    }
}
