//! The report as one self-contained HTML page: inline CSS and SVG, no script, no network, no
//! external font; light and dark after the reader's `prefers-color-scheme`. Everything shown
//! goes through [`escape`]: a name, a message or a test's output can never become markup.

use std::fmt::Write as _;

use checkpoint_core::claim_history::History;
use checkpoint_core::render;
use checkpoint_core::sanitize;
use checkpoint_engine::session::activity::{StopEntry, TestEntry};

use super::chart;
use super::model::{Commits, Report, Session, Summary, TaskView};
use super::text::{code_list, escape, time, verdict_name, wire_name};

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e;
  --line: #d1d9e0; --panel: #f6f8fa; --ok: #1a7f37; --bad: #cf222e; --cap: #9a6700;
  --accent: #0969da; --mark: #8250df; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1;
  --line: #3d444d; --panel: #151b23; --ok: #3fb950; --bad: #f85149; --cap: #d29922;
  --accent: #4493f8; --mark: #ab7df8; } }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; max-width: 1100px; padding: 16px 24px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 0 0 6px; } .muted, time { color: var(--muted); }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
.summary { display: grid; grid-template-columns: repeat(auto-fill, minmax(130px, 1fr)); gap: 8px;
  margin: 0; }
.summary div { background: var(--panel); border: 1px solid var(--line); border-radius: 6px;
  padding: 6px 10px; } .summary dt { color: var(--muted); font-size: 12px; }
.summary dd { margin: 0; font-size: 20px; font-weight: 600; }
article.session { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px;
  margin: 12px 0; }
svg { width: 100%; height: auto; display: block; margin: 6px 0; }
svg text { fill: var(--muted); font: 11px system-ui, sans-serif; }
.axis { stroke: var(--line); stroke-width: 1; }
.mark.allowed { fill: var(--ok); } .mark.blocked { fill: var(--bad); }
.mark.allowed_by_cap { fill: var(--cap); } .mark.checkpoint { fill: var(--accent); }
.mark.start { fill: none; stroke: var(--mark); stroke-width: 2; }
.mark.progress { fill: var(--mark); }
.turn { fill: var(--panel); stroke: var(--line); }
.usage { fill: none; stroke: var(--accent); stroke-width: 2; } .sample { fill: var(--accent); }
.threshold { stroke-width: 1; stroke-dasharray: 4 3; } .threshold.warn { stroke: var(--cap); }
.threshold.critical { stroke: var(--bad); }
.event { stroke: var(--mark); stroke-width: 1.5; } .event.clear { stroke-dasharray: 2 2; }
.verdict { font-weight: 600; } .verdict.allowed { color: var(--ok); }
.verdict.blocked { color: var(--bad); } .verdict.allowed_by_cap { color: var(--cap); }
details { margin: 4px 0; } summary { cursor: pointer; }
ol.stops, ul.plain { list-style: none; padding: 0; margin: 4px 0; }
table { border-collapse: collapse; margin: 4px 0 8px; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; } th { color: var(--muted); font-weight: 500; font-size: 12px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: var(--ok); } .bad { color: var(--bad); }
.legend span { margin-right: 14px; white-space: nowrap; }
";

/// The whole page.
pub(crate) fn page(report: &Report) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let where_ = escape(&report.worktree);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">\
         <title>checkpoint report: {where_}</title><style>{STYLE}</style></head><body>\n\
         <header><h1>What happened in <code>{where_}</code></h1><p class=\"muted\">Made {}",
        time(report.generated_at)
    );
    if let Some(since) = report.since {
        let _ = write!(out, ", from {} on", time(since));
    }
    out.push_str(" (UTC).</p></header>\n");
    summary(&mut out, &report.summary);
    out.push_str("<section id=\"sessions\"><h2>Sessions</h2>\n");
    out.push_str(
        "<p class=\"legend muted\"><span><svg width=\"10\" height=\"10\" \
         style=\"display:inline;width:10px\"><circle class=\"mark allowed\" cx=\"5\" cy=\"5\" \
         r=\"5\"/></svg> allowed</span><span><svg width=\"10\" height=\"10\" \
         style=\"display:inline;width:10px\"><circle class=\"mark blocked\" cx=\"5\" cy=\"5\" \
         r=\"5\"/></svg> blocked</span><span><svg width=\"10\" height=\"10\" \
         style=\"display:inline;width:10px\"><circle class=\"mark allowed_by_cap\" cx=\"5\" \
         cy=\"5\" r=\"5\"/></svg> allowed by the block cap</span><span>◆ checkpoint</span>\
         <span>○ session start</span><span>▲ progress</span></p>\n",
    );
    if report.sessions.is_empty() {
        out.push_str("<p>No session recorded here yet.</p>\n");
    }
    for (n, one) in report.sessions.iter().enumerate() {
        session(&mut out, n, one, report);
    }
    out.push_str("</section>\n");
    if let Some(task) = &report.task {
        task_section(&mut out, task);
    }
    if let Some(commits) = &report.commits {
        commits_section(&mut out, commits);
    }
    claims_section(&mut out, &report.claims);
    out.push_str("</body></html>\n");
    out
}

fn summary(out: &mut String, summary: &Summary) {
    out.push_str("<section id=\"summary\"><h2>Summary</h2><dl class=\"summary\">");
    let time = render::duration(summary.test_time_ms);
    let cells: [(&str, &str, String); 10] = [
        ("sessions", "Sessions", summary.sessions.to_string()),
        ("turns", "Turns", summary.turns.to_string()),
        ("stops", "Stops", summary.stops.to_string()),
        ("allowed", "Allowed", summary.allowed.to_string()),
        ("blocked", "Blocked", summary.blocked.to_string()),
        (
            "allowed_by_cap",
            "Allowed by the cap",
            summary.allowed_by_cap.to_string(),
        ),
        ("test_runs", "Test runs", summary.test_runs.to_string()),
        ("test_time", "Time in test runs", time),
        ("cache_hits", "Cache hits", summary.cache_hits.to_string()),
        ("restarts", "Restarts", summary.restarts.to_string()),
    ];
    for (id, label, value) in cells {
        let _ = write!(
            out,
            "<div><dt>{label}</dt><dd id=\"summary-{id}\">{}</dd></div>",
            escape(&value)
        );
    }
    out.push_str("</dl>");
    if !summary.blocks_by_reason.is_empty() {
        out.push_str("<p>Blocks by reason: </p><ul id=\"blocks-by-reason\">");
        for (reason, count) in &summary.blocks_by_reason {
            let reason = escape(reason);
            let _ = write!(out, "<li data-reason=\"{reason}\">{reason}: {count}</li>");
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>\n");
}

fn session(out: &mut String, n: usize, session: &Session, report: &Report) {
    let (agent, id) = (session.agent.name(), escape(&session.id));
    let _ = write!(
        out,
        "<article class=\"session\" id=\"session-{n}\" data-agent=\"{agent}\" \
         data-session=\"{id}\"><h3>{agent} · <code>{id}</code></h3>"
    );
    if let Some((first, last)) = session.span() {
        let _ = write!(
            out,
            "<p class=\"muted\">{} – {}: {} turn(s), {} stop(s), {} checkpoint(s)</p>",
            time(first),
            time(last),
            session.turns,
            session.stops.len(),
            session.checkpoints.len()
        );
        chart::timeline(out, session, (first, last));
        chart::context(out, session, (first, last), report.thresholds);
    }
    if !session.stops.is_empty() {
        out.push_str("<h4>Stops</h4><ol class=\"stops\">");
        for stop in &session.stops {
            stop_item(out, stop);
        }
        out.push_str("</ol>");
    }
    if !session.checkpoints.is_empty() {
        out.push_str("<h4>Checkpoints</h4><ul class=\"plain checkpoints\">");
        for c in &session.checkpoints {
            let _ = write!(
                out,
                "<li class=\"checkpoint\"><time>{}</time> #{} <b>{}</b>",
                time(c.at),
                c.id,
                c.trigger.name()
            );
            if let Some(percent) = c.percent {
                let _ = write!(out, " at {percent} %");
            }
            for text in [&c.detail, &c.unresolved].into_iter().flatten() {
                let _ = write!(out, ": {}", escape(text));
            }
            if !c.files.is_empty() {
                let _ = write!(out, " — {}", code_list(&c.files));
                if c.more_files > 0 {
                    let _ = write!(out, " and {} more", c.more_files);
                }
            }
            out.push_str("</li>");
        }
        out.push_str("</ul>");
    }
    if !session.progress.is_empty() {
        out.push_str("<h4>Progress</h4><ul class=\"plain progress\">");
        for p in &session.progress {
            let _ = write!(
                out,
                "<li class=\"progress\"><time>{}</time> {}</li>",
                time(p.at),
                escape(&p.text)
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</article>\n");
}

fn stop_item(out: &mut String, stop: &StopEntry) {
    let (class, name) = verdict_name(stop.verdict);
    let _ = write!(
        out,
        "<li class=\"stop {class}\"><details><summary><time>{}</time> \
         <span class=\"verdict {class}\">{name}</span> {}</summary>",
        time(stop.at),
        escape(&stop.headline)
    );
    if !stop.reasons.is_empty() {
        out.push_str("<ul class=\"reasons\">");
        for reason in &stop.reasons {
            let _ = write!(out, "<li>{}</li>", escape(reason));
        }
        out.push_str("</ul>");
    }
    if !stop.findings.is_empty() {
        out.push_str("<p>Integrity findings:</p><ul class=\"findings\">");
        for finding in &stop.findings {
            let _ = write!(out, "<li>{}</li>", escape(finding));
        }
        out.push_str("</ul>");
    }
    out.push_str("</details>");
    if !stop.tests.is_empty() {
        out.push_str(
            "<table class=\"tests\"><tr><th>command</th><th>run</th><th>outcome</th>\
             <th>duration</th><th>passed</th><th>failed</th><th>skipped</th></tr>",
        );
        for test in &stop.tests {
            test_row(out, test);
        }
        out.push_str("</table>");
    }
    out.push_str("</li>");
}

fn test_row(out: &mut String, test: &TestEntry) {
    let run = match (&test.narrowed, test.cached) {
        (Some(narrowed), true) => format!("narrowed ({narrowed}), cached"),
        (Some(narrowed), false) => format!("narrowed ({narrowed})"),
        (None, true) => "full, cached".to_owned(),
        (None, false) => "full".to_owned(),
    };
    let status = wire_name(&test.status);
    let class = if status == "passed" { "ok" } else { "bad" };
    let count = |n: Option<u32>| n.map_or_else(|| "–".to_owned(), |n| n.to_string());
    let mut failing = String::new();
    if !test.failing.is_empty() {
        failing = format!("<br>failing: {}", code_list(&test.failing));
    }
    let _ = write!(
        out,
        "<tr class=\"test\"><td><code>{}</code>{failing}</td><td>{}</td>\
         <td class=\"{class}\">{status}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
         <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
        escape(&test.command),
        escape(&run),
        render::duration(test.duration_ms),
        count(test.passed),
        count(test.failed),
        count(test.skipped)
    );
}

fn task_section(out: &mut String, task: &TaskView) {
    let _ = write!(
        out,
        "<section id=\"task\"><h2>Task <code>{}</code> ({})</h2><p>State: <b>{}</b>, \
         started {}</p><table class=\"steps\"><tr><th>step</th><th>status</th><th>attempt</th>\
         <th>failures</th><th>validation</th></tr>",
        escape(&task.name),
        escape(&task.id),
        escape(&task.state),
        time(task.created_at)
    );
    for step in &task.steps {
        let status = wire_name(&step.status);
        let _ = write!(
            out,
            "<tr class=\"step\"><td>{}</td><td>{status}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td><code>{}</code></td></tr>",
            escape(&step.name),
            step.attempt,
            step.failures,
            escape(step.validate.as_deref().unwrap_or("–"))
        );
    }
    out.push_str("</table>");
    let _ = write!(
        out,
        "<h3>Receipts ({} of {})</h3><table class=\"receipts\"><tr><th>receipt</th>\
         <th>step</th><th>command</th><th>outcome</th><th>signature</th></tr>",
        task.receipts.len(),
        task.receipts_total
    );
    for r in &task.receipts {
        let (class, outcome) = match r.passed {
            Some(true) => ("ok", "passed"),
            Some(false) => ("bad", "did not pass"),
            None => ("bad", "?"),
        };
        let _ = write!(
            out,
            "<tr class=\"receipt\"><td><code>{}</code></td><td>{}</td><td><code>{}</code></td>\
             <td class=\"{class}\">{outcome}</td><td>{}</td></tr>",
            escape(&r.id),
            escape(r.step.as_deref().unwrap_or("–")),
            escape(r.command.as_deref().unwrap_or("?")),
            escape(&r.check.to_string())
        );
    }
    out.push_str("</table>");
    let _ = write!(
        out,
        "<details><summary>History: the last {} of {} entries</summary>\
         <ul class=\"plain history\">",
        task.history.len(),
        task.history_total
    );
    for h in &task.history {
        let kind = wire_name(&h.kind);
        let _ = write!(
            out,
            "<li><time>{}</time> {kind} {}{} → {}</li>",
            time(h.at),
            h.step
                .as_deref()
                .map(|s| format!("[{}] ", escape(s)))
                .unwrap_or_default(),
            escape(
                &h.detail
                    .as_deref()
                    .map(|d| sanitize::line(d, 300))
                    .unwrap_or_default()
            ),
            h.state.name()
        );
    }
    out.push_str("</ul></details></section>\n");
}

fn commits_section(out: &mut String, commits: &Commits) {
    let verified = commits.checks.iter().filter(|c| c.verified).count();
    let _ = write!(
        out,
        "<section id=\"commits\"><h2>Commits: <code>{}</code></h2><p>{verified} of {} \
         verified. {}</p><table class=\"commits\"><tr><th></th><th>commit</th><th>what \
         <code>checkpoint verify</code> says</th></tr>",
        escape(&commits.range),
        commits.checks.len(),
        escape(&commits.signers)
    );
    for check in &commits.checks {
        let (class, sign) = if check.verified {
            ("ok", "✓")
        } else {
            ("bad", "✗")
        };
        let short = check
            .commit
            .commit
            .get(..12)
            .unwrap_or(&check.commit.commit);
        let _ = write!(
            out,
            "<tr class=\"commit {class}\" data-verified=\"{}\"><td class=\"{class}\">{sign}</td>\
             <td><code>{}</code></td><td>{}</td></tr>",
            check.verified,
            escape(short),
            escape(&check.to_string())
        );
    }
    out.push_str("</table></section>\n");
}

/// The completion claims of the sessions shown (`checkpoint history`'s counts): a row per agent
/// with a claim, and the total.
fn claims_section(out: &mut String, history: &History) {
    out.push_str("<section id=\"claims\"><h2>Completion claims</h2>");
    if history.total.claims == 0 {
        out.push_str(
            "<p>No turn of these sessions' transcripts edited files and then claimed \
             completion.</p></section>\n",
        );
        return;
    }
    out.push_str(
        "<p class=\"muted\">Turns that edited files and ended with a completion claim, from \
         the agents' transcripts: whether a test command passed after the last edit, and what \
         the gate said at the turn.</p><table class=\"claims\"><tr><th>agent</th>\
         <th>claims</th><th>verified</th><th>stale</th><th>failed</th><th>never ran</th>\
         <th>not gated</th><th>allowed</th><th>blocked</th><th>fixed</th><th>capped</th></tr>",
    );
    let rows = (history.agents.iter())
        .filter(|a| a.tally.claims > 0)
        .map(|a| (a.agent.name(), &a.tally))
        .chain([("total", &history.total)]);
    for (name, t) in rows {
        let (v, g) = (&t.verification, &t.gate);
        let _ = write!(
            out,
            "<tr data-agent=\"{name}\"><td>{name}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            t.claims,
            v.verified,
            v.stale,
            v.failed,
            v.never_ran,
            g.not_gated,
            g.allowed,
            g.blocked,
            g.fixed,
            g.capped
        );
    }
    out.push_str("</table></section>\n");
}
