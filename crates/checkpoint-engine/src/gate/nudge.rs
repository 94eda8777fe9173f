//! After a tool call that names a file: when the file is a test (or runner configuration, or
//! protected) and is now weaker than at the turn's base, a short note goes with the tool's
//! result, once per weakening of the file. It never blocks: the stop judges the whole turn.

use std::path::{Component, Path, PathBuf};

use super::call::Call;
use crate::git::Repo;
use crate::project::ProjectError;
use crate::session::{MAX_NUDGED, SessionStore};
use checkpoint_core::render;

/// The note for the tool call `call` answers, if an edit it made weakened the tests.
pub(super) fn after_tool(call: &Call, repo: &Repo) -> Result<Option<String>, ProjectError> {
    let event = call.event;
    let paths: Vec<String> = (event.tool_files().into_iter())
        .filter_map(|file| inside(&repo.workdir, &event.cwd, file))
        .collect();
    if paths.is_empty() {
        return Ok(None);
    }
    let project = call.host.project(repo.clone())?;
    let sessions = SessionStore::new(&project.state_dir);
    let base = sessions.load(event.agent, call.session_id())?.turn_base;
    let mut findings = Vec::new();
    let mut told = Vec::new();
    for path in &paths {
        let found = project.edit_findings(base.as_deref(), path);
        if found.is_empty() {
            continue;
        }
        told.push(checkpoint_core::hex::sha256_hex(
            format!("{path}\0{found:?}").as_bytes(),
        ));
        findings.extend(found);
    }
    if findings.is_empty() {
        return Ok(None);
    }
    let fresh = sessions.update(event.agent, call.session_id(), |record| {
        let fresh = told.iter().any(|key| !record.nudged.contains(key));
        for key in told {
            if !record.nudged.contains(&key) {
                record.nudged.push(key);
            }
        }
        let excess = record.nudged.len().saturating_sub(MAX_NUDGED);
        record.nudged.drain(..excess);
        fresh
    })?;
    Ok(fresh.then(|| render::edit_nudge(&findings)))
}

/// `file` (absolute, or relative to `cwd`) as a path relative to `workdir` with `/`
/// separators, when it lies inside it (no `..` out of it; a worktree reached through a link is
/// compared where both really are) and outside `.git/`; `None` otherwise. The file itself is
/// read later without following a link.
pub(super) fn inside(workdir: &Path, cwd: &Path, file: &str) -> Option<String> {
    let joined = cwd.join(file);
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                if !normal.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    let relative = match normal.strip_prefix(workdir) {
        Ok(relative) => relative.to_owned(),
        Err(_) => {
            let real = workdir.canonicalize().ok()?;
            let dir = normal.parent()?.canonicalize().ok()?;
            dir.strip_prefix(&real).ok()?.join(normal.file_name()?)
        }
    };
    let parts: Option<Vec<&str>> = (relative.components())
        .map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect();
    let path = parts?.join("/");
    (!path.is_empty() && path != ".git" && !path.starts_with(".git/")).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_inside_the_worktree_are_looked_at() {
        let (work, cwd) = (Path::new("/r"), Path::new("/r/sub"));
        assert_eq!(inside(work, cwd, "t.py").as_deref(), Some("sub/t.py"));
        assert_eq!(
            inside(work, cwd, "/r/tests/t.py").as_deref(),
            Some("tests/t.py")
        );
        assert_eq!(
            inside(work, cwd, "../tests/./t.py").as_deref(),
            Some("tests/t.py")
        );
        for outside in [
            "../../etc/passwd",
            "/etc/passwd",
            "/r2/t.py",
            "..",
            "/r/.git/config",
        ] {
            assert_eq!(inside(work, cwd, outside), None, "{outside}");
        }
    }
}
