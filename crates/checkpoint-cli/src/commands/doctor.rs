//! `checkpoint doctor [--json]`: whether the gate will really run here. For each agent: where our
//! hooks are installed (read back from the files `checkpoint install` writes), whether the
//! command they run is an executable adapter of this version, whether the agent will run them in
//! this project (its own trust records, from the agent's doctor table), and a live check — a
//! captured payload of each installed event, with `cwd` set to this project, piped through the
//! exact configured command, its answer checked against the agent's protocol. Then whether this
//! project's commands are trusted, and, when `checkpoint install git` installed its hooks here,
//! whether the `pre-push` one pushes the checkpoint refs. Exit 1 when anything is a problem, else 0.
//!
//! The live check has no side effects on the project's state: the hooks run with
//! `CHECKPOINT_STATE_DIR` and `XDG_CONFIG_HOME` in a temporary directory (so the gate keeps its
//! sessions and checkpoints there, and finds no approval: it runs none of the project's
//! commands), `CHECKPOINT_TESTS_COMMAND=""` and `CHECKPOINT_INTEGRITY_MODE=off` (so no test
//! command of the user's runs either). What the gate still does is read git.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use checkpoint_core::doctor::{Check, Here};
use checkpoint_engine::hook;
use checkpoint_engine::runner::{self, HookRun};
use checkpoint_engine::trust::Trust;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::CliError;
use crate::install::git_hooks;
use crate::install::inspect::{self, Installed};
use crate::install::{AgentSpec, Scope};
use crate::{agents, exit_codes, output, project, schema};

/// How long one hook run of the live check (and `--version`, and a question to an agent's CLI)
/// may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(20);

/// Options of `checkpoint doctor`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the report as JSON (schema_version, per agent the checks with status, message and
    /// fix).
    #[arg(long)]
    json: bool,
}

/// The whole report.
#[derive(Debug, Serialize)]
struct Report {
    schema_version: u32,
    /// Whether there is no problem.
    ok: bool,
    /// The project checked.
    project: PathBuf,
    agents: Vec<AgentReport>,
    /// Checks of the project itself (its trust) and of the whole (nothing installed).
    checks: Vec<Line>,
}

/// One agent's part.
#[derive(Debug, Serialize)]
struct AgentReport {
    agent: &'static str,
    title: &'static str,
    installed: bool,
    checks: Vec<Line>,
}

/// One check as reported.
#[derive(Debug, Serialize)]
struct Line {
    status: Status,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Problem,
    /// Neither: an agent that is not installed.
    Info,
}

impl From<Check> for Line {
    fn from(check: Check) -> Line {
        let status = if check.ok {
            Status::Ok
        } else {
            Status::Problem
        };
        Line {
            status,
            message: check.message,
            fix: check.fix,
        }
    }
}

/// `checkpoint doctor`.
pub(crate) fn run(args: &Args) -> Result<ExitCode, CliError> {
    let root = project::root()?;
    let scratch = tempfile::tempdir().map_err(|e| {
        CliError::new(
            format!("cannot create a temporary directory: {e}"),
            "check TMPDIR",
        )
    })?;
    let mut agents_found = Vec::new();
    for home in agents::HOMES {
        let Some(spec) = AgentSpec::of(home) else {
            continue;
        };
        agents_found.push(agent_report(&spec, &root, scratch.path())?);
    }
    let mut checks = vec![project_trust()?];
    // Our git hooks, when they are installed here.
    let git_hooks = git_hooks::hooks_dir(&root).ok();
    checks.extend(
        (git_hooks.as_deref())
            .and_then(git_hooks::pre_push_check)
            .map(Line::from),
    );
    if !agents_found.iter().any(|agent| agent.installed) {
        checks.push(Line::from(Check::problem(
            "checkpoint is installed for no agent: nothing runs the gate",
            format!(
                "checkpoint install claude --user  # or {}",
                (agents::HOMES.iter())
                    .filter_map(|home| AgentSpec::of(*home))
                    .map(|spec| spec.name())
                    .filter(|name| *name != "claude")
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )));
    }
    let ok = (agents_found.iter().flat_map(|a| &a.checks))
        .chain(&checks)
        .all(|line| line.status != Status::Problem);
    let report = Report {
        schema_version: schema::SCHEMA_VERSION,
        ok,
        project: root,
        agents: agents_found,
        checks,
    };
    if args.json {
        output::json(&report)?;
    } else {
        output::out(&render(&report));
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit_codes::NO)
    })
}

/// The checks of one agent: per hooks file with our handlers, where, the adapter, whether the
/// agent runs them here, and the live check.
fn agent_report(spec: &AgentSpec, root: &Path, scratch: &Path) -> Result<AgentReport, CliError> {
    let name = spec.name();
    let installs = match inspect::installed(spec, root) {
        Ok(installs) => installs,
        Err(err) => {
            let line = Line::from(Check::problem(
                err.message,
                err.hint
                    .unwrap_or_else(|| "fix the file by hand".to_owned()),
            ));
            return Ok(report(spec, true, vec![line]));
        }
    };
    if installs.is_empty() {
        let line = Line {
            status: Status::Info,
            message: format!("not installed (`checkpoint install {name} --user` installs it)"),
            fix: None,
        };
        return Ok(report(spec, false, vec![line]));
    }
    let mut lines = Vec::new();
    if let [first, second, ..] = &installs[..] {
        lines.push(Line::from(Check::problem(
            format!(
                "installed in both {} and {}: every event runs the adapter twice",
                first.file.display(),
                second.file.display()
            ),
            format!(
                "{}  # or the other: {}",
                uninstall(spec, &second.scope),
                uninstall(spec, &first.scope)
            ),
        )));
    }
    if let Some(plugin) = inspect::packaged_plugin(spec, root)? {
        lines.push(Line::from(Check::problem(
            format!(
                "checkpoint's plugin is wired too ({}): every event runs the adapter twice",
                plugin.display()
            ),
            format!(
                "keep the plugin, remove the installed hooks: {}",
                installs
                    .iter()
                    .map(|i| uninstall(spec, &i.scope))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        )));
    }
    for install in &installs {
        let reinstall = reinstall(spec, &install.scope);
        let events: Vec<&str> = install.handlers.iter().map(|(e, _)| e.as_str()).collect();
        lines.push(Line::from(Check::ok(format!(
            "{} hooks in {} ({})",
            scope_name(&install.scope),
            install.file.display(),
            events.join(", ")
        ))));
        let missing: Vec<&str> = (spec.table.events.iter())
            .map(|event| event.name)
            .filter(|name| !events.contains(name))
            .collect();
        if !missing.is_empty() {
            lines.push(Line::from(Check::problem(
                format!("no hook for {}", missing.join(", ")),
                reinstall.clone(),
            )));
        }
        let adapter = adapter_check(spec, install, &reinstall);
        let adapter_ok = adapter.ok;
        lines.push(adapter.into());
        lines.extend(runs_here(spec, install, root)?.into_iter().map(Line::from));
        if adapter_ok {
            lines.push(live_check(spec, install, root, scratch, &reinstall).into());
        }
    }
    Ok(report(spec, true, lines))
}

fn report(spec: &AgentSpec, installed: bool, checks: Vec<Line>) -> AgentReport {
    AgentReport {
        agent: spec.name(),
        title: spec.table.title,
        installed,
        checks,
    }
}

fn scope_name(scope: &Scope) -> &'static str {
    match scope {
        Scope::Project(_) => "project",
        Scope::User => "user",
    }
}

/// The command that rewrites the hooks of `scope` with this version's adapter.
fn reinstall(spec: &AgentSpec, scope: &Scope) -> String {
    match scope {
        Scope::Project(root) => format!(
            "cd {} && checkpoint install {}",
            root.display(),
            spec.name()
        ),
        Scope::User => format!("checkpoint install {} --user", spec.name()),
    }
}

/// The command that removes the hooks of `scope`.
fn uninstall(spec: &AgentSpec, scope: &Scope) -> String {
    reinstall(spec, scope).replacen("checkpoint install", "checkpoint uninstall", 1)
}

/// Every handler runs one executable adapter, which reports this version.
fn adapter_check(spec: &AgentSpec, install: &Installed, reinstall: &str) -> Check {
    let mut commands: Vec<&str> = install.handlers.iter().map(|(_, c)| c.as_str()).collect();
    commands.dedup();
    let [command] = commands[..] else {
        return Check::problem(
            format!("the hooks run different commands: {}", commands.join(" | ")),
            reinstall,
        );
    };
    let parsed = inspect::program(command)
        .and_then(|program| Some((inspect::version_command(&program)?, program)));
    let Some((version, program)) = parsed else {
        return Check::problem(
            format!("cannot parse the hook command `{command}`"),
            reinstall,
        );
    };
    if let Err(problem) = executable(&program) {
        return Check::problem(
            format!("the hooks run {}: {problem}", program.display()),
            reinstall,
        );
    }
    let expected = hook::version_line(spec.home);
    match runner::run_hook(&version, Path::new("/"), &[], b"", RUN_TIMEOUT) {
        Ok(run) if run.exit_code == Some(0) && run.stdout.trim() == expected => {
            Check::ok(format!("adapter {} ({expected})", program.display()))
        }
        Ok(run) => Check::problem(
            format!(
                "adapter {} is not {expected}: `--version` said {:?}",
                program.display(),
                output::one_line(&run.stdout)
            ),
            reinstall,
        ),
        Err(e) => Check::problem(format!("adapter {}: {e}", program.display()), reinstall),
    }
}

/// Whether `path` is an existing regular file someone may execute.
fn executable(path: &Path) -> Result<(), &'static str> {
    use std::os::unix::fs::PermissionsExt;
    if !path.is_absolute() {
        return Err("not an absolute path");
    }
    match std::fs::metadata(path) {
        Err(_) => Err("no such file"),
        Ok(meta) if !meta.is_file() => Err("not a file"),
        Ok(meta) if meta.permissions().mode() & 0o111 == 0 => Err("not executable"),
        Ok(_) => Ok(()),
    }
}

/// What the agent's doctor table says about running these hooks here.
fn runs_here(spec: &AgentSpec, install: &Installed, root: &Path) -> Result<Vec<Check>, CliError> {
    let doctor = &spec.table.doctor;
    let (trust_file, text) = inspect::trust_file(spec, doctor.trust_file)?;
    let text = match text {
        Ok(text) => text,
        Err(e) => {
            return Ok(vec![Check::problem(
                format!("cannot read {}: {e}", trust_file.display()),
                format!("make {} a readable file", trust_file.display()),
            )]);
        }
    };
    let files = inspect::settings_files(spec, root)?;
    let settings: Vec<(&Path, &Map<String, Value>)> = files
        .iter()
        .map(|(path, content)| (path.as_path(), content))
        .collect();
    let events: Vec<&str> = install.handlers.iter().map(|(e, _)| e.as_str()).collect();
    let project_scope = match &install.scope {
        Scope::Project(root) => Some(root.as_path()),
        Scope::User => None,
    };
    // The agent's own CLI, where it can say, knows best what it will run.
    let answer = doctor.ask.and_then(|query| {
        let program = runner::on_path(query.program, &std::env::var_os("PATH")?)?;
        let request = (query.request)(root);
        runner::ask(
            &program,
            query.args,
            root,
            &request,
            query.answers,
            RUN_TIMEOUT,
        )
    });
    let here = Here {
        project_scope,
        project_root: root,
        hooks_file: &install.file,
        events: &events,
        settings: &settings,
        trust_file: &trust_file,
        trust_text: text.as_deref(),
        var: &|name| std::env::var(name).ok(),
        agent_answer: answer.as_deref(),
    };
    Ok((doctor.runs_here)(&here))
}

/// Pipes a captured payload of each installed event, `cwd` set to `root`, through the handler's
/// command the way the agent runs it, and checks each answer against the agent's protocol.
fn live_check(
    spec: &AgentSpec,
    install: &Installed,
    root: &Path,
    scratch: &Path,
    reinstall: &str,
) -> Check {
    let doctor = &spec.table.doctor;
    let dir = root.display().to_string();
    let mut env: Vec<(String, String)> = (doctor.start_dir_vars.iter())
        .map(|var| ((*var).to_owned(), dir.clone()))
        .collect();
    let scratch_var =
        |name: &str, sub: &str| (name.to_owned(), scratch.join(sub).display().to_string());
    env.extend([
        scratch_var("CHECKPOINT_STATE_DIR", "state"),
        scratch_var("XDG_CONFIG_HOME", "config"),
        ("CHECKPOINT_TESTS_COMMAND".to_owned(), String::new()),
        ("CHECKPOINT_INTEGRITY_MODE".to_owned(), "off".to_owned()),
    ]);
    for (event, command) in &install.handlers {
        let Some((_, payload)) = doctor.payloads.iter().find(|(name, _)| name == event) else {
            continue;
        };
        let answer = payload_here(payload, root)
            .and_then(|payload| runner::run_hook(command, root, &env, &payload, RUN_TIMEOUT))
            .and_then(|run| judge(spec, event, &run));
        if let Err(problem) = answer {
            return Check::problem(
                format!("live check: {event}: {problem}"),
                format!("{reinstall}  # then run `checkpoint doctor` again"),
            );
        }
    }
    Check::ok(format!(
        "live check: {} events answered as {} expects",
        install.handlers.len(),
        spec.table.title
    ))
}

/// `payload` with its `cwd` set to `root`.
fn payload_here(payload: &str, root: &Path) -> Result<Vec<u8>, String> {
    let mut value: serde_json::Value =
        serde_json::from_str(payload).map_err(|e| format!("the captured payload: {e}"))?;
    value["cwd"] = root.display().to_string().into();
    Ok(value.to_string().into_bytes())
}

fn judge(spec: &AgentSpec, event: &str, run: &HookRun) -> Result<(), String> {
    if run.timed_out {
        return Err(format!("no answer within {} s", RUN_TIMEOUT.as_secs()));
    }
    let Some(code) = run.exit_code else {
        return Err("killed by a signal".to_owned());
    };
    (spec.table.doctor.check_answer)(event, code, &run.stdout)
}

/// Whether this project's commands are approved for the gate.
fn project_trust() -> Result<Line, CliError> {
    let Some(project) = project::host().git_project(&project::cwd()?)? else {
        return Ok(Line::from(Check::problem(
            "not in a git repository: the gate judges only git repositories",
            "git init",
        )));
    };
    let root = project.workdir.display();
    let approval = project.approval()?;
    let trust = Trust::check(&project.commands, approval.as_ref(), &project.user_slots);
    // Its commands as approved, but its config file, what they run or its repository changed.
    let changes = match (&trust, &approval) {
        (Trust::Trusted, Some(approval)) => project.changes_since(approval)?,
        _ => Vec::new(),
    };
    Ok(Line::from(match trust {
        Trust::Trusted if !changes.is_empty() => Check::problem(
            format!(
                "{root}: changed since you approved it: {}",
                changes.join("; ")
            ),
            format!("cd {root} && checkpoint trust"),
        ),
        Trust::Trusted => Check::ok(format!("{root}: its commands are approved for the gate")),
        Trust::Untrusted(_) => Check::problem(
            format!("{root}: its commands are not approved, so the gate runs none of them"),
            format!("cd {root} && checkpoint trust"),
        ),
        Trust::Changed { .. } => Check::problem(
            format!("{root}: its commands changed since you approved them"),
            format!("cd {root} && checkpoint trust"),
        ),
    }))
}

/// The report as text: a heading per agent, one line per check, a `fix:` line under a problem.
fn render(report: &Report) -> String {
    let mut text = Vec::new();
    let mut section = |heading: &str, lines: &[Line]| {
        text.push(heading.to_owned());
        for line in lines {
            let status = match line.status {
                Status::Ok => "ok     ",
                Status::Problem => "problem",
                Status::Info => "-      ",
            };
            text.push(format!("  {status} {}", line.message));
            if let Some(fix) = &line.fix {
                text.push(format!("          fix: {fix}"));
            }
        }
    };
    for agent in &report.agents {
        section(agent.title, &agent.checks);
    }
    section(
        &format!("Project {}", report.project.display()),
        &report.checks,
    );
    text.push(if report.ok {
        "All is well.".to_owned()
    } else {
        "Problems found: run the fixes above.".to_owned()
    });
    text.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_installed_event_has_a_captured_payload_of_its_own() {
        for home in agents::HOMES {
            let spec = AgentSpec::of(home).unwrap();
            for event in spec.table.events {
                let (_, payload) = (spec.table.doctor.payloads.iter())
                    .find(|(name, _)| *name == event.name)
                    .unwrap_or_else(|| panic!("{}: {}", spec.name(), event.name));
                let parsed = checkpoint_core::HookEvent::parse(home, payload.as_bytes()).unwrap();
                assert_eq!(parsed.wire_name, event.name, "{}", spec.name());
            }
        }
    }
}
