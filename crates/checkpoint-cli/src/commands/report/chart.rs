//! The two drawings of a session, as inline SVG: its timeline (turns, stops, checkpoints,
//! starts, progress) and its context-usage curve with the thresholds and the compaction and
//! `/clear` points. Each mark carries its text in a `<title>`, shown on hover.

use std::fmt::Write as _;

use checkpoint_core::journal::Trigger;
use jiff::Timestamp;

use super::model::{Session, Thresholds};
use super::text::{escape, time, verdict_name};

/// The drawings' width in SVG units, and the margin on each side.
const WIDTH: f64 = 1000.0;
const MARGIN: f64 = 16.0;

/// Where `at` falls on the x axis of a drawing spanning `span`.
fn x(at: Timestamp, (first, last): (Timestamp, Timestamp)) -> f64 {
    let total = (last.as_millisecond() - first.as_millisecond()) as f64;
    let share = if total > 0.0 {
        (at.as_millisecond() - first.as_millisecond()) as f64 / total
    } else {
        0.5
    };
    MARGIN + share.clamp(0.0, 1.0) * (WIDTH - 2.0 * MARGIN)
}

/// The session's timeline: turns as bands, stops on the axis, checkpoints above it, starts and
/// progress below.
pub(super) fn timeline(out: &mut String, session: &Session, span: (Timestamp, Timestamp)) {
    let _ = write!(
        out,
        "<svg class=\"timeline\" viewBox=\"0 0 {WIDTH} 84\" role=\"img\" \
         aria-label=\"timeline\"><line class=\"axis\" x1=\"{MARGIN}\" y1=\"42\" x2=\"{}\" \
         y2=\"42\"/>",
        WIDTH - MARGIN
    );
    // One band per turn: from its start (or first stop) to its last stop.
    let mut turns: Vec<(Timestamp, Timestamp, usize)> = Vec::new();
    let mut last_turn = None;
    for stop in &session.stops {
        match turns.last_mut() {
            Some(turn) if last_turn == Some(stop.turn_began) => {
                turn.1 = stop.at;
                turn.2 += 1;
            }
            _ => turns.push((stop.turn_began.unwrap_or(stop.at).max(span.0), stop.at, 1)),
        }
        last_turn = Some(stop.turn_began);
    }
    for (n, (from, to, stops)) in turns.iter().enumerate() {
        let (x1, x2) = (x(*from, span), x(*to, span));
        let _ = write!(
            out,
            "<rect class=\"turn\" x=\"{:.1}\" y=\"30\" width=\"{:.1}\" height=\"24\" rx=\"4\">\
             <title>turn {}: {stops} stop(s), {} – {}</title></rect>",
            x1 - 8.0,
            x2 - x1 + 16.0,
            n + 1,
            time(*from),
            time(*to)
        );
    }
    for stop in &session.stops {
        let (class, name) = verdict_name(stop.verdict);
        let _ = write!(
            out,
            "<circle class=\"mark stop {class}\" cx=\"{:.1}\" cy=\"42\" r=\"7\"><title>{name} at \
             {}: {}</title></circle>",
            x(stop.at, span),
            time(stop.at),
            escape(&stop.headline)
        );
    }
    for c in &session.checkpoints {
        let cx = x(c.at, span);
        let percent = c.percent.map(|p| format!(" at {p} %")).unwrap_or_default();
        let _ = write!(
            out,
            "<path class=\"mark checkpoint\" d=\"M{cx:.1},4 l7,7 -7,7 -7,-7z\"><title>checkpoint \
             #{} ({}){percent} at {}</title></path>",
            c.id,
            c.trigger.name(),
            time(c.at)
        );
    }
    for s in &session.starts {
        let from = s
            .resumed_from
            .map(|id| format!(", resumed from checkpoint #{id}"));
        let _ = write!(
            out,
            "<circle class=\"mark start{}\" cx=\"{:.1}\" cy=\"72\" r=\"6\"><title>session start \
             ({}) at {}{}</title></circle>",
            if s.resumed_from.is_some() {
                " restart"
            } else {
                ""
            },
            x(s.at, span),
            escape(s.source.as_deref().unwrap_or("startup")),
            time(s.at),
            from.unwrap_or_default()
        );
    }
    for p in &session.progress {
        let px = x(p.at, span);
        let _ = write!(
            out,
            "<path class=\"mark progress\" d=\"M{px:.1},65 l7,13 -14,0z\"><title>progress at {}: \
             {}</title></path>",
            time(p.at),
            escape(&p.text)
        );
    }
    out.push_str("</svg>");
}

/// The y of `percent` on the context curve: 0 % at the bottom (y 170), 100 % at the top (y 20).
fn y(percent: u8) -> f64 {
    170.0 - f64::from(percent.min(100)) * 1.5
}

/// The session's context usage over time, with the thresholds, and a line at each compaction
/// (a `pre_compact` checkpoint, a start after compaction) and `/clear`.
pub(super) fn context(
    out: &mut String,
    session: &Session,
    span: (Timestamp, Timestamp),
    thresholds: Thresholds,
) {
    let compactions = (session.checkpoints.iter())
        .filter(|c| c.trigger == Trigger::PreCompact)
        .map(|c| {
            (
                c.at,
                "compaction",
                format!("compaction (checkpoint #{})", c.id),
            )
        });
    let starts = (session.starts.iter()).filter_map(|s| match s.source.as_deref() {
        Some("compact") => Some((s.at, "compaction", "start after compaction".to_owned())),
        Some("clear") => Some((s.at, "clear", "/clear".to_owned())),
        _ => None,
    });
    let events: Vec<_> = compactions.chain(starts).collect();
    if session.context.is_empty() && events.is_empty() {
        out.push_str("<p class=\"muted\">No context usage measured in this session.</p>");
        return;
    }
    let _ = write!(
        out,
        "<svg class=\"context\" viewBox=\"0 0 {WIDTH} 190\" role=\"img\" \
         aria-label=\"context usage\"><line class=\"axis\" x1=\"{MARGIN}\" y1=\"170\" x2=\"{}\" \
         y2=\"170\"/><text x=\"{MARGIN}\" y=\"186\">context used, 0–100 %</text>",
        WIDTH - MARGIN
    );
    for (class, percent) in [("warn", thresholds.warn), ("critical", thresholds.critical)] {
        let ty = y(percent);
        let _ = write!(
            out,
            "<line class=\"threshold {class}\" x1=\"{MARGIN}\" y1=\"{ty:.1}\" x2=\"{}\" \
             y2=\"{ty:.1}\"><title>{class}: {percent} %</title></line><text x=\"{}\" \
             y=\"{:.1}\" text-anchor=\"end\">{class} {percent} %</text>",
            WIDTH - MARGIN,
            WIDTH - MARGIN,
            ty - 3.0
        );
    }
    for (at, class, what) in &events {
        let ex = x(*at, span);
        let _ = write!(
            out,
            "<line class=\"event {class}\" x1=\"{ex:.1}\" y1=\"14\" x2=\"{ex:.1}\" y2=\"170\">\
             <title>{} at {}</title></line>",
            escape(what),
            time(*at)
        );
    }
    let points: Vec<String> = (session.context.iter())
        .map(|s| format!("{:.1},{:.1}", x(s.at, span), y(s.percent)))
        .collect();
    if !points.is_empty() {
        let _ = write!(
            out,
            "<polyline class=\"usage\" points=\"{}\"/>",
            points.join(" ")
        );
    }
    for s in &session.context {
        let _ = write!(
            out,
            "<circle class=\"sample\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" data-percent=\"{}\">\
             <title>{} %: {} of {} tokens at {}</title></circle>",
            x(s.at, span),
            y(s.percent),
            s.percent,
            s.percent,
            s.used,
            s.window,
            time(s.at)
        );
    }
    out.push_str("</svg>");
}
