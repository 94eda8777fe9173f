//! `checkpoint install` / `checkpoint uninstall`: the hooks files they write, keep and refuse.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use insta::assert_snapshot;
use tempfile::TempDir;

use crate::{checkpoint, code, git};

/// A project directory and, outside it, a directory of fake adapters.
struct Fixture {
    project: TempDir,
    bin: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let bin = tempfile::tempdir().unwrap();
        for agent in [
            "claude", "gemini", "codex", "copilot", "opencode", "qwen", "droid",
        ] {
            fs::write(bin.path().join(format!("checkpoint-{agent}")), "").unwrap();
        }
        Fixture {
            project: tempfile::tempdir().unwrap(),
            bin,
        }
    }

    fn adapter(&self, agent: &str) -> String {
        self.bin
            .path()
            .join(format!("checkpoint-{agent}"))
            .display()
            .to_string()
    }

    /// `checkpoint install <agent> --adapter <fake> ARGS` in the project.
    fn install(&self, agent: &str, args: &[&str]) -> Output {
        let adapter = self.adapter(agent);
        let mut all = vec!["install", agent, "--adapter", &adapter];
        all.extend_from_slice(args);
        checkpoint(self.project.path(), &all, "")
    }

    fn uninstall(&self, agent: &str, args: &[&str]) -> Output {
        let mut all = vec!["uninstall", agent];
        all.extend_from_slice(args);
        checkpoint(self.project.path(), &all, "")
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.project.path().join(relative)
    }

    fn read(&self, relative: &str) -> String {
        fs::read_to_string(self.path(relative)).unwrap()
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// `text` with the temporary directories' paths replaced by `[project]` and `[bin]`.
    fn stable(&self, text: impl AsRef<[u8]>) -> String {
        let text = String::from_utf8_lossy(text.as_ref());
        let canonical = |dir: &Path| dir.canonicalize().unwrap().display().to_string();
        text.replace(&canonical(self.bin.path()), "[bin]")
            .replace(&canonical(self.project.path()), "[project]")
    }
}

const FILES: [(&str, &str); 3] = [
    ("claude", ".claude/settings.json"),
    ("gemini", ".gemini/settings.json"),
    ("codex", ".codex/hooks.json"),
];

fn ok(out: &Output) -> String {
    assert_eq!(
        code(out),
        0,
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn install_writes_each_agents_handlers_into_an_empty_project() {
    let fx = Fixture::new();
    for (agent, _) in FILES {
        ok(&fx.install(agent, &[]));
    }
    assert_snapshot!(fx.stable(fx.read(".claude/settings.json")), @r#"
    {
      "hooks": {
        "Stop": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 1800
              }
            ]
          }
        ],
        "SubagentStop": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 1800
              }
            ]
          }
        ],
        "SubagentStart": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "UserPromptSubmit": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PreToolUse": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PostToolUse": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "SessionStart": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PreCompact": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "SessionEnd": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 5
              }
            ]
          }
        ]
      }
    }
    "#);
    assert_snapshot!(fx.stable(fx.read(".gemini/settings.json")), @r#"
    {
      "hooks": {
        "AfterAgent": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-gemini --hook",
                "name": "checkpoint",
                "timeout": 1800000
              }
            ]
          }
        ],
        "BeforeAgent": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-gemini --hook",
                "name": "checkpoint",
                "timeout": 30000
              }
            ]
          }
        ],
        "BeforeTool": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-gemini --hook",
                "name": "checkpoint",
                "timeout": 30000
              }
            ]
          }
        ],
        "AfterTool": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-gemini --hook",
                "name": "checkpoint",
                "timeout": 30000
              }
            ]
          }
        ],
        "SessionStart": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-gemini --hook",
                "name": "checkpoint",
                "timeout": 30000
              }
            ]
          }
        ],
        "PreCompress": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-gemini --hook",
                "name": "checkpoint",
                "timeout": 30000
              }
            ]
          }
        ],
        "SessionEnd": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-gemini --hook",
                "name": "checkpoint",
                "timeout": 5000
              }
            ]
          }
        ]
      }
    }
    "#);
    assert_snapshot!(fx.stable(fx.read(".codex/hooks.json")), @r#"
    {
      "hooks": {
        "Stop": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-codex --hook",
                "timeout": 1800
              }
            ]
          }
        ],
        "SubagentStop": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-codex --hook",
                "timeout": 1800
              }
            ]
          }
        ],
        "SubagentStart": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-codex --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "UserPromptSubmit": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-codex --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PreToolUse": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-codex --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PostToolUse": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-codex --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "SessionStart": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-codex --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PreCompact": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-codex --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "SessionEnd": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-codex --hook",
                "timeout": 5
              }
            ]
          }
        ]
      }
    }
    "#);
}

/// Copilot CLI's hooks go into a versioned file of checkpoint's own, each handler straight in its
/// event's list; a handler someone adds to that file stays through a reinstall and an
/// uninstall, and without one the uninstall leaves nothing behind.
#[test]
fn copilot_gets_a_versioned_hooks_file_of_its_own() {
    let fx = Fixture::new();
    let file = ".github/hooks/checkpoint.json";
    let out = ok(&fx.install("copilot", &[]));
    assert_snapshot!(fx.stable(out), @r#"
    Installed checkpoint hooks for GitHub Copilot CLI in [project]/.github/hooks/checkpoint.json: agentStop, userPromptSubmitted, preToolUse, postToolUse, sessionStart, preCompact, sessionEnd.
    Where: the hooks fire when GitHub Copilot CLI starts anywhere inside [project]; in another worktree only once .github/hooks/checkpoint.json is committed there. To gate every worktree: `checkpoint install copilot --user`.
    Next: trust the folder when GitHub Copilot CLI asks (or start it with --trust-folder, or COPILOT_ALLOW_ALL=true); it loads a project's hooks only in a trusted folder.
    Checkpoint's files in this project: .github/hooks/checkpoint.json. Commit them to share the hooks with everyone working here; until then the stop gate does not count them (nor the `*.checkpoint.bak` backups) as uncommitted work. `checkpoint uninstall --all` removes them.
    "#);
    let installed = fx.read(file);
    assert_snapshot!(fx.stable(&installed), @r#"
    {
      "version": 1,
      "hooks": {
        "agentStop": [
          {
            "type": "command",
            "bash": "[bin]/checkpoint-copilot --hook",
            "timeoutSec": 1800
          }
        ],
        "userPromptSubmitted": [
          {
            "type": "command",
            "bash": "[bin]/checkpoint-copilot --hook",
            "timeoutSec": 30
          }
        ],
        "preToolUse": [
          {
            "type": "command",
            "bash": "[bin]/checkpoint-copilot --hook",
            "timeoutSec": 30
          }
        ],
        "postToolUse": [
          {
            "type": "command",
            "bash": "[bin]/checkpoint-copilot --hook",
            "timeoutSec": 30
          }
        ],
        "sessionStart": [
          {
            "type": "command",
            "bash": "[bin]/checkpoint-copilot --hook",
            "timeoutSec": 30
          }
        ],
        "preCompact": [
          {
            "type": "command",
            "bash": "[bin]/checkpoint-copilot --hook",
            "timeoutSec": 30
          }
        ],
        "sessionEnd": [
          {
            "type": "command",
            "bash": "[bin]/checkpoint-copilot --hook",
            "timeoutSec": 5
          }
        ]
      }
    }
    "#);
    ok(&fx.install("copilot", &[]));
    assert_eq!(fx.read(file), installed, "a second install changes nothing");

    let mut edited: serde_json::Value = serde_json::from_str(&installed).unwrap();
    edited["hooks"]["agentStop"].as_array_mut().unwrap().insert(
        0,
        serde_json::json!({"type": "command", "bash": "./notify.sh"}),
    );
    fx.write(file, &serde_json::to_string_pretty(&edited).unwrap());
    ok(&fx.install("copilot", &[]));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&fx.read(file)).unwrap(),
        edited,
        "the reinstall keeps the other handler and its place"
    );
    ok(&fx.uninstall("copilot", &[]));
    assert_snapshot!(fx.read(file), @r#"
    {
      "version": 1,
      "hooks": {
        "agentStop": [
          {
            "type": "command",
            "bash": "./notify.sh"
          }
        ]
      }
    }
    "#);

    // In a git repository, where install's ledger (`.git/checkpoint/`) outlives each command.
    let fresh = Fixture::new();
    git(fresh.project.path(), &["init", "-q"]);
    ok(&fresh.install("copilot", &[]));
    let out = ok(&fresh.uninstall("copilot", &[]));
    assert!(
        !fresh.path(".github").exists(),
        "nothing of the install is left: {out}"
    );
}

/// OpenCode gets a plugin file of checkpoint's own that runs the adapter; a second install
/// changes nothing, a file of that name that is not ours is refused, an edited plugin is kept by
/// uninstall, and otherwise uninstall leaves nothing behind.
#[test]
fn opencode_gets_a_plugin_of_its_own() {
    let fx = Fixture::new();
    git(fx.project.path(), &["init", "-q"]);
    let file = ".opencode/plugins/checkpoint.js";
    let out = ok(&fx.install("opencode", &[]));
    assert_snapshot!(fx.stable(out), @r"
    Installed checkpoint hooks for OpenCode in [project]/.opencode/plugins/checkpoint.js: session.idle, chat.message, tool.execute.after, session.start, session.compacting.
    Where: the hooks fire when OpenCode starts anywhere inside [project]; in another worktree only once .opencode/plugins/checkpoint.js is committed there. To gate every worktree: `checkpoint install opencode --user`.
    Next: restart OpenCode; it loads the plugin at start, without asking.
    Checkpoint's files in this project: .opencode/plugins/checkpoint.js. Commit them to share the hooks with everyone working here; until then the stop gate does not count them (nor the `*.checkpoint.bak` backups) as uncommitted work. `checkpoint uninstall --all` removes them.
    ");
    let installed = fx.read(file);
    let command = installed
        .lines()
        .find(|line| line.starts_with("const COMMAND = "))
        .unwrap();
    assert_snapshot!(fx.stable(command), @r#"const COMMAND = "[bin]/checkpoint-opencode --hook";"#);
    assert!(installed.contains("export const CheckpointPlugin = async"));
    let again = ok(&fx.install("opencode", &[]));
    assert!(again.contains("already installed"), "{again}");
    assert_eq!(fx.read(file), installed, "a second install changes nothing");
    let dry = ok(&fx.uninstall("opencode", &["--dry-run"]));
    assert!(dry.contains("-const COMMAND = "), "{dry}");
    assert_eq!(fx.read(file), installed, "a dry run writes nothing");

    fx.write(file, &format!("{installed}// my own line\n"));
    let out = ok(&fx.uninstall("opencode", &[]));
    assert!(
        out.contains("was edited since checkpoint wrote it"),
        "{out}"
    );
    assert!(fx.path(file).exists(), "an edited plugin is the user's");
    fx.write(file, &installed);
    ok(&fx.uninstall("opencode", &[]));
    assert!(
        !fx.path(".opencode").exists(),
        "nothing of the install is left"
    );

    let theirs = "export const Mine = async () => ({});\n";
    fx.write(file, theirs);
    let out = fx.install("opencode", &[]);
    assert_eq!(code(&out), 3);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("it is not checkpoint's OpenCode plugin"),
        "{out:?}"
    );
    assert_eq!(
        fx.read(file),
        theirs,
        "somebody else's file is left untouched"
    );
    ok(&fx.uninstall("opencode", &[]));
    assert_eq!(fx.read(file), theirs, "and uninstall leaves it too");
}

/// `--mcp` for an agent whose MCP configuration checkpoint does not write is refused before
/// anything is written.
/// Qwen Code rewrites a settings file without `"$version"` at its first run (a committed file
/// would turn into uncommitted work), and reads a `timeout` of 1000 or more as milliseconds:
/// install writes both so that Qwen leaves the file alone and waits as long as meant.
#[test]
fn qwen_gets_claudes_matcher_groups_in_a_versioned_settings_file() {
    let fx = Fixture::new();
    git(fx.project.path(), &["init", "-q"]);
    ok(&fx.install("qwen", &[]));
    let settings: serde_json::Value =
        serde_json::from_str(&fx.read(".qwen/settings.json")).unwrap();
    assert_eq!(settings["$version"], 4, "{settings}");
    let stop = &settings["hooks"]["Stop"][0]["hooks"][0];
    assert_eq!(stop["name"], "checkpoint", "{settings}");
    assert_eq!(stop["timeout"], 1_800_000, "{settings}");
    assert_eq!(
        settings["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"],
        5000
    );
    let events: Vec<&String> = settings["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        events,
        [
            "Stop",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "SessionStart",
            "PreCompact",
            "SessionEnd"
        ]
    );
    ok(&fx.uninstall("qwen", &[]));
    assert!(!fx.path(".qwen").exists(), "nothing of the install is left");
}

/// Droid takes Claude Code's matcher groups under `"hooks"` in `.factory/settings.json`, timeouts
/// in seconds, for the events captured from it; uninstall leaves nothing behind.
#[test]
fn droid_gets_claudes_matcher_groups_in_its_settings_file() {
    let fx = Fixture::new();
    git(fx.project.path(), &["init", "-q"]);
    ok(&fx.install("droid", &[]));
    let settings: serde_json::Value =
        serde_json::from_str(&fx.read(".factory/settings.json")).unwrap();
    let stop = &settings["hooks"]["Stop"][0]["hooks"][0];
    assert_eq!(stop["type"], "command", "{settings}");
    assert_eq!(stop["timeout"], 1800, "{settings}");
    let events: Vec<&String> = settings["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        events,
        [
            "Stop",
            "PreToolUse",
            "PostToolUse",
            "SessionStart",
            "SessionEnd"
        ]
    );
    ok(&fx.uninstall("droid", &[]));
    assert!(
        !fx.path(".factory").exists(),
        "nothing of the install is left"
    );
}

#[test]
fn mcp_is_refused_for_opencode_before_anything_is_written() {
    let fx = Fixture::new();
    let out = fx.install("opencode", &["--mcp"]);
    assert_eq!(code(&out), 2);
    assert_snapshot!(String::from_utf8_lossy(&out.stderr), @r"
    error: --mcp: checkpoint does not register MCP servers for OpenCode
    hint: install without --mcp, and add `checkpoint mcp` to OpenCode's MCP configuration by hand
    ");
    assert!(!fx.path(".opencode").exists());
}

#[test]
fn install_says_what_it_wrote_and_what_is_left_to_do() {
    let fx = Fixture::new();
    assert_snapshot!(fx.stable(ok(&fx.install("codex", &[]))), @r#"
    Installed checkpoint hooks for Codex CLI in [project]/.codex/hooks.json: Stop, SubagentStop, SubagentStart, UserPromptSubmit, PreToolUse, PostToolUse, SessionStart, PreCompact, SessionEnd.
    Where: the hooks fire when Codex CLI starts anywhere inside [project]; in another worktree only once .codex/hooks.json is committed there. To gate every worktree: `checkpoint install codex --user`.
    Next: review and trust the hooks with `/hooks` in the Codex TUI (or run `codex exec --dangerously-bypass-hook-trust`).
    Project hooks load only in a trusted project: `[projects."[project]"] trust_level = "trusted"` in ~/.codex/config.toml.
    Checkpoint's files in this project: .codex/hooks.json. Commit them to share the hooks with everyone working here; until then the stop gate does not count them (nor the `*.checkpoint.bak` backups) as uncommitted work. `checkpoint uninstall --all` removes them.
    "#);
    assert_snapshot!(fx.stable(ok(&fx.install("gemini", &[]))), @r"
    Installed checkpoint hooks for Gemini CLI in [project]/.gemini/settings.json: AfterAgent, BeforeAgent, BeforeTool, AfterTool, SessionStart, PreCompress, SessionEnd.
    Where: the hooks fire only when Gemini CLI starts in [project] itself — not in its subdirectories, nor in another worktree (Gemini CLI reads a project's hooks only from the directory it starts in). To gate those too: `checkpoint install gemini --user`.
    Next: trust the folder when Gemini CLI asks (headless: GEMINI_CLI_TRUST_WORKSPACE=true); hooks do not run in an untrusted folder.
    Checkpoint's files in this project: .gemini/settings.json. Commit them to share the hooks with everyone working here; until then the stop gate does not count them (nor the `*.checkpoint.bak` backups) as uncommitted work. `checkpoint uninstall --all` removes them.
    ");
}

#[test]
fn installing_twice_writes_the_same_bytes() {
    let fx = Fixture::new();
    for (agent, file) in FILES {
        ok(&fx.install(agent, &[]));
        let once = fx.read(file);
        let again = ok(&fx.install(agent, &[]));
        assert!(again.contains("already installed"), "{again}");
        assert_eq!(fx.read(file), once, "{agent}");
        let backup = fx.path(&format!("{file}.checkpoint.bak"));
        assert!(
            !backup.exists(),
            "{agent}: nothing changed, nothing to back up"
        );
    }
}

/// A Claude settings file in the layout the installer writes, so an uninstall can restore it
/// byte for byte.
const FOREIGN: &str = r#"{
  "permissions": {
    "deny": [
      "Bash(rm:*)"
    ],
    "allow": []
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/guard",
            "timeout": 5
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "say done"
          }
        ]
      }
    ]
  },
  "model": "opus"
}
"#;

#[test]
fn foreign_hooks_and_other_keys_survive_in_order() {
    let fx = Fixture::new();
    fx.write(".claude/settings.json", FOREIGN);
    ok(&fx.install("claude", &[]));
    assert_snapshot!(fx.stable(fx.read(".claude/settings.json")), @r#"
    {
      "permissions": {
        "deny": [
          "Bash(rm:*)"
        ],
        "allow": []
      },
      "hooks": {
        "PreToolUse": [
          {
            "matcher": "Bash",
            "hooks": [
              {
                "type": "command",
                "command": "/opt/guard",
                "timeout": 5
              }
            ]
          },
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "Stop": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "say done"
              }
            ]
          },
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 1800
              }
            ]
          }
        ],
        "SubagentStop": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 1800
              }
            ]
          }
        ],
        "SubagentStart": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "UserPromptSubmit": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PostToolUse": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "SessionStart": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "PreCompact": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 30
              }
            ]
          }
        ],
        "SessionEnd": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "[bin]/checkpoint-claude --hook",
                "timeout": 5
              }
            ]
          }
        ]
      },
      "model": "opus"
    }
    "#);

    let installed = fx.read(".claude/settings.json");
    let out = ok(&fx.uninstall("claude", &[]));
    assert_snapshot!(fx.stable(out), @r"
    Removed checkpoint hooks for Claude Code from [project]/.claude/settings.json: PreToolUse, Stop, SubagentStop, SubagentStart, UserPromptSubmit, PostToolUse, SessionStart, PreCompact, SessionEnd.
    Removed the checkpoint-progress skill from [project]/.claude/skills/checkpoint-progress/SKILL.md.
    ");
    assert_eq!(fx.read(".claude/settings.json"), FOREIGN);
    // Uninstall makes no backup; install's stays, as this user's ledger (a fresh config
    // directory per run here) does not know it.
    assert_ne!(fx.read(".claude/settings.json"), installed);
    assert_eq!(fx.read(".claude/settings.json.checkpoint.bak"), FOREIGN);
}

#[test]
fn uninstall_removes_ours_wherever_they_are_and_nothing_else() {
    let fx = Fixture::new();
    fx.write(
        ".codex/hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/old/place/checkpoint-codex"},
                                          {"type": "command", "command": "/x/notify"}]}],
                      "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "A=1 /old/checkpoint-codex --hook"}]}],
                      "PostToolUse": [{"hooks": [{"type": "command", "command": "/x/checkpoint-codex-lint"}]}]},
            "x": 1}"#,
    );
    let out = ok(&fx.uninstall("codex", &[]));
    assert!(out.contains("Stop, SessionStart."), "{out}");
    assert_snapshot!(fx.read(".codex/hooks.json"), @r#"
    {
      "hooks": {
        "Stop": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "/x/notify"
              }
            ]
          }
        ],
        "PostToolUse": [
          {
            "hooks": [
              {
                "type": "command",
                "command": "/x/checkpoint-codex-lint"
              }
            ]
          }
        ]
      },
      "x": 1
    }
    "#);
    let again = ok(&fx.uninstall("codex", &[]));
    assert!(again.contains("nothing to change"), "{again}");
}

/// A foreign handler whose program only happens to be named like the adapter keeps its place and
/// its flags; one of ours with environment assignments in front is recognised and replaced (not
/// installed twice).
#[test]
fn ours_is_the_command_install_writes_not_a_program_name() {
    let fx = Fixture::new();
    let ours = format!("CHECKPOINT_DEBUG=1 {} --hook", fx.adapter("claude"));
    fx.write(
        ".claude/settings.json",
        &serde_json::json!({"hooks": {
            "Stop": [{"hooks": [
                {"type": "command", "command": "/opt/theirs/checkpoint-claude --strict"},
                {"type": "command", "command": "checkpoint-claude"},
                {"type": "command", "command": ours}
            ]}]
        }})
        .to_string(),
    );
    ok(&fx.install("claude", &[]));
    let settings: serde_json::Value =
        serde_json::from_str(&fx.read(".claude/settings.json")).unwrap();
    let stop: Vec<&str> = settings["hooks"]["Stop"][0]["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|handler| handler["command"].as_str().unwrap())
        .collect();
    // Ours, replaced, keeps the user's environment prefix.
    assert_eq!(
        stop,
        [
            "/opt/theirs/checkpoint-claude --strict",
            "checkpoint-claude",
            ours.as_str()
        ]
    );
    assert_eq!(settings["hooks"]["Stop"].as_array().unwrap().len(), 1);

    let out = ok(&fx.uninstall("claude", &[]));
    assert!(out.contains("Stop"), "{out}");
    let settings: serde_json::Value =
        serde_json::from_str(&fx.read(".claude/settings.json")).unwrap();
    assert_eq!(
        settings["hooks"]["Stop"][0]["hooks"],
        serde_json::json!([
            {"type": "command", "command": "/opt/theirs/checkpoint-claude --strict"},
            {"type": "command", "command": "checkpoint-claude"}
        ])
    );
}

#[test]
fn reinstalling_after_a_move_replaces_the_old_path() {
    let fx = Fixture::new();
    ok(&fx.install("claude", &[]));
    let first = fx.read(".claude/settings.json");
    let moved = tempfile::tempdir().unwrap();
    let adapter = moved.path().join("with space/checkpoint-claude");
    fs::create_dir_all(adapter.parent().unwrap()).unwrap();
    fs::write(&adapter, "").unwrap();
    let adapter = adapter.display().to_string();
    ok(&checkpoint(
        fx.project.path(),
        &["install", "claude", "--adapter", &adapter],
        "",
    ));
    let second = fx.read(".claude/settings.json");
    let events = first.matches("checkpoint-claude").count();
    assert!(events >= 4, "{first}");
    assert_eq!(
        second.matches("checkpoint-claude").count(),
        events,
        "{second}"
    );
    assert_eq!(
        second.matches(&format!("\"'{adapter}' --hook\"")).count(),
        events,
        "{second}"
    );
    assert_eq!(fx.read(".claude/settings.json.checkpoint.bak"), first);
}

#[test]
fn project_root_is_the_git_toplevel() {
    let fx = Fixture::new();
    git(fx.project.path(), &["init", "-q"]);
    let sub = fx.path("src/deep");
    fs::create_dir_all(&sub).unwrap();
    let adapter = fx.adapter("gemini");
    ok(&checkpoint(
        &sub,
        &["install", "gemini", "--adapter", &adapter],
        "",
    ));
    assert!(fx.path(".gemini/settings.json").is_file());
    assert!(!sub.join(".gemini").exists());
}

/// `checkpoint ARGS` in `dir` with HOME and the agents' home variables as given (the others unset).
fn checkpoint_with_env(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = cargo_bin_cmd!("checkpoint");
    cmd.current_dir(dir).args(args);
    let homes = [
        "CLAUDE_CONFIG_DIR",
        "GEMINI_CLI_HOME",
        "CODEX_HOME",
        "COPILOT_HOME",
    ];
    for var in ["HOME", "XDG_CONFIG_HOME"].into_iter().chain(homes) {
        cmd.env_remove(var);
    }
    for (key, _) in std::env::vars().filter(|(key, _)| key.starts_with("CHECKPOINT_")) {
        cmd.env_remove(key);
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("run checkpoint")
}

/// Every file below `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn user_scope_writes_under_each_agents_home() {
    let fx = Fixture::new();
    let homes = tempfile::tempdir().unwrap();
    let home = homes.path().join("home");
    let custom = homes.path().join("custom");
    let cases: [(&str, Option<&str>, PathBuf); 10] = [
        ("claude", None, home.join(".claude/settings.json")),
        (
            "claude",
            Some("CLAUDE_CONFIG_DIR"),
            custom.join("settings.json"),
        ),
        ("gemini", None, home.join(".gemini/settings.json")),
        (
            "gemini",
            Some("GEMINI_CLI_HOME"),
            custom.join(".gemini/settings.json"),
        ),
        ("codex", None, home.join(".codex/hooks.json")),
        ("codex", Some("CODEX_HOME"), custom.join("hooks.json")),
        ("copilot", None, home.join(".copilot/hooks/checkpoint.json")),
        (
            "copilot",
            Some("COPILOT_HOME"),
            custom.join("hooks/checkpoint.json"),
        ),
        (
            "opencode",
            None,
            home.join(".config/opencode/plugins/checkpoint.js"),
        ),
        (
            "opencode",
            Some("XDG_CONFIG_HOME"),
            custom.join("opencode/plugins/checkpoint.js"),
        ),
    ];
    for (agent, var, expected) in cases {
        let mut env = vec![("HOME", home.as_path())];
        env.extend(var.map(|var| (var, custom.as_path())));
        let adapter = fx.adapter(agent);
        let args = ["install", agent, "--user", "--adapter", &adapter];
        let out = checkpoint_with_env(fx.project.path(), &args, &env);
        let stdout = ok(&out);
        assert!(stdout.contains(&expected.display().to_string()), "{stdout}");
        let reach = stdout.lines().find(|l| l.starts_with("Where:"));
        if (agent, var) == ("claude", None) {
            assert_snapshot!(reach.unwrap_or_default(), @r"
            Where: the hooks fire wherever Claude Code starts, in every repository and worktree; in a project you have not trusted (`checkpoint trust`) the gate runs none of its commands, but its commit gate applies.
            ");
        }
        // Claude also gets the checkpoint-progress skill beside its settings.
        let mut written = vec![expected.clone()];
        if agent == "claude" {
            let dir = expected.parent().unwrap();
            written.insert(0, dir.join("skills/checkpoint-progress/SKILL.md"));
        }
        // Besides them, only checkpoint's ledger of what it wrote, in its config directory.
        // (`XDG_CONFIG_HOME` moves checkpoint's config directory too.)
        let outside_config = |files: Vec<PathBuf>| -> Vec<PathBuf> {
            let configs = [home.join(".config/checkpoint"), custom.join("checkpoint")];
            files
                .into_iter()
                .filter(|f| !configs.iter().any(|config| f.starts_with(config)))
                .collect()
        };
        assert_eq!(
            outside_config(files_under(homes.path())),
            written,
            "{agent} {var:?}"
        );
        assert!(fs::read_to_string(&expected).unwrap().contains(&adapter));

        let args = ["uninstall", agent, "--user"];
        ok(&checkpoint_with_env(fx.project.path(), &args, &env));
        assert_eq!(
            outside_config(files_under(homes.path())),
            Vec::<PathBuf>::new(),
            "uninstall removes the file and the skill it created"
        );
        for dir in [&home, &custom] {
            if dir.exists() {
                fs::remove_dir_all(dir).unwrap();
            }
        }
    }
    assert_eq!(fs::read_dir(fx.project.path()).unwrap().count(), 0);
}

/// Every path below `dir` (directories end in `/`) with the content of each file.
fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.strip_prefix(dir).unwrap().display().to_string();
        if path.is_dir() {
            paths.push((format!("{name}/"), String::new()));
            let below = tree(&path).into_iter();
            paths.extend(below.map(|(sub, text)| (format!("{name}/{sub}"), text)));
        } else {
            paths.push((name, fs::read_to_string(&path).unwrap()));
        }
    }
    paths.sort();
    paths
}

/// Every agent installed for the user from inside a project (which install approves), then
/// `uninstall --all --user`: the home is as it was, with the user's own files in it untouched.
#[test]
fn uninstall_all_for_the_user_leaves_the_home_as_found() {
    let fx = Fixture::new();
    let project = checkpoint_testkit::repo("python-passing");
    let homes = tempfile::tempdir().unwrap();
    let home = homes.path().join("home");
    fs::create_dir_all(home.join(".codex")).unwrap();
    fs::write(home.join(".codex/config.toml"), "model = \"theirs\"\n").unwrap();
    let before = tree(&home);
    let env = [("HOME", home.as_path())];
    for agent in ["claude", "gemini", "codex", "copilot", "opencode"] {
        let adapter = fx.adapter(agent);
        let mut args = vec!["install", agent, "--user", "--adapter", &adapter];
        if agent != "opencode" {
            args.push("--mcp");
        }
        if agent == "claude" {
            args.push("--statusline");
        }
        ok(&checkpoint_with_env(project.path(), &args, &env));
    }
    assert_ne!(tree(&home), before);

    let out = checkpoint_with_env(project.path(), &["uninstall", "--all", "--user"], &env);
    let said = ok(&out);
    assert!(
        said.contains("Withdrew the approval install gave"),
        "{said}"
    );
    assert_snapshot!(String::from_utf8_lossy(&out.stderr), @r"
    Git hooks are per repository, not the user's: `checkpoint uninstall git` in each repository removes them.
    ");
    assert_eq!(tree(&home), before);
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let fx = Fixture::new();
    let out = ok(&fx.install("gemini", &["--dry-run"]));
    assert!(out.starts_with("--- /dev/null\n+++ "), "{out}");
    assert!(out.contains("+            \"timeout\": 1800000"), "{out}");
    assert!(!fx.path(".gemini").exists());

    let original = "{\n  \"general\": {\n    \"vimMode\": true\n  }\n}";
    fx.write(".gemini/settings.json", original);
    let out = ok(&fx.install("gemini", &["--dry-run"]));
    assert_snapshot!(fx.stable(out), @r#"
    --- [project]/.gemini/settings.json
    +++ [project]/.gemini/settings.json
    @@ -1,5 +1,91 @@
     {
       "general": {
         "vimMode": true
    +  },
    +  "hooks": {
    +    "AfterAgent": [
    +      {
    +        "hooks": [
    +          {
    +            "type": "command",
    +            "command": "[bin]/checkpoint-gemini --hook",
    +            "name": "checkpoint",
    +            "timeout": 1800000
    +          }
    +        ]
    +      }
    +    ],
    +    "BeforeAgent": [
    +      {
    +        "hooks": [
    +          {
    +            "type": "command",
    +            "command": "[bin]/checkpoint-gemini --hook",
    +            "name": "checkpoint",
    +            "timeout": 30000
    +          }
    +        ]
    +      }
    +    ],
    +    "BeforeTool": [
    +      {
    +        "hooks": [
    +          {
    +            "type": "command",
    +            "command": "[bin]/checkpoint-gemini --hook",
    +            "name": "checkpoint",
    +            "timeout": 30000
    +          }
    +        ]
    +      }
    +    ],
    +    "AfterTool": [
    +      {
    +        "hooks": [
    +          {
    +            "type": "command",
    +            "command": "[bin]/checkpoint-gemini --hook",
    +            "name": "checkpoint",
    +            "timeout": 30000
    +          }
    +        ]
    +      }
    +    ],
    +    "SessionStart": [
    +      {
    +        "hooks": [
    +          {
    +            "type": "command",
    +            "command": "[bin]/checkpoint-gemini --hook",
    +            "name": "checkpoint",
    +            "timeout": 30000
    +          }
    +        ]
    +      }
    +    ],
    +    "PreCompress": [
    +      {
    +        "hooks": [
    +          {
    +            "type": "command",
    +            "command": "[bin]/checkpoint-gemini --hook",
    +            "name": "checkpoint",
    +            "timeout": 30000
    +          }
    +        ]
    +      }
    +    ],
    +    "SessionEnd": [
    +      {
    +        "hooks": [
    +          {
    +            "type": "command",
    +            "command": "[bin]/checkpoint-gemini --hook",
    +            "name": "checkpoint",
    +            "timeout": 5000
    +          }
    +        ]
    +      }
    +    ]
       }
    -}
    \ No newline at end of file
    +}
    "#);
    assert_eq!(fx.read(".gemini/settings.json"), original);
    assert_eq!(fs::read_dir(fx.path(".gemini")).unwrap().count(), 1);

    let out = ok(&fx.uninstall("gemini", &["--dry-run"]));
    assert_eq!(out, "nothing to change\n");
}

/// Numbers serde_json would rewrite (a 64-bit-plus integer became a float, `1.50` became `1.5`)
/// are written back exactly as the user's file had them, through install and uninstall.
#[test]
fn numbers_in_settings_files_are_kept_exactly() {
    let fx = Fixture::new();
    let text =
        "{\n  \"lastShown\": 1754400000000123456789,\n  \"scale\": 1.50,\n  \"big\": 1e400\n}\n";
    fx.write(".claude/settings.json", text);
    ok(&fx.install("claude", &[]));
    let installed = fx.read(".claude/settings.json");
    for number in [
        "\"lastShown\": 1754400000000123456789,",
        "\"scale\": 1.50,",
        "\"big\": 1e400,",
    ] {
        assert!(installed.contains(number), "{installed}");
    }
    ok(&fx.uninstall("claude", &[]));
    assert_eq!(fx.read(".claude/settings.json"), text);
}

#[test]
fn unparseable_files_are_refused_and_left_untouched() {
    let cases = [
        ("{\n  // mine\n  \"hooks\": {}\n}\n", "not strict JSON"),
        ("{\"hooks\": {},}", "trailing comma"),
        ("[]", "the top level is not an object"),
        ("{\"hooks\": \"none\"}", "`hooks` is not an object"),
        (
            "{\"hooks\": {\"Stop\": {}}}",
            "`hooks.Stop` is not an array",
        ),
        (
            "{\"hooks\": {\"Notification\": [7]}}",
            "`hooks.Notification[0]` is not an object",
        ),
        (
            "{\"hooks\": {\"Stop\": [{\"hooks\": []}]}, \"hooks\": {}}",
            "the top level has the key \"hooks\" twice; remove one",
        ),
    ];
    for (text, problem) in cases {
        let fx = Fixture::new();
        fx.write(".claude/settings.json", text);
        for out in [fx.install("claude", &[]), fx.uninstall("claude", &[])] {
            assert_eq!(code(&out), 3, "{text}");
            let stderr = fx.stable(&out.stderr);
            let lines: Vec<&str> = stderr.lines().collect();
            assert_eq!(lines.len(), 2, "{stderr}");
            assert!(
                lines[0].starts_with("error: [project]/.claude/settings.json: "),
                "{stderr}"
            );
            assert!(lines[0].contains(problem), "{stderr}");
            assert!(
                lines[1].starts_with("hint: the file was left untouched"),
                "{stderr}"
            );
            assert_eq!(
                fs::read(fx.path(".claude/settings.json")).unwrap(),
                text.as_bytes()
            );
            assert_eq!(fs::read_dir(fx.path(".claude")).unwrap().count(), 1);
        }
    }
}

#[test]
fn a_missing_or_misnamed_adapter_is_an_error_with_a_hint() {
    let fx = Fixture::new();
    let missing = fx.bin.path().join("gone/checkpoint-codex");
    let out = checkpoint(
        fx.project.path(),
        &[
            "install",
            "codex",
            "--adapter",
            &missing.display().to_string(),
        ],
        "",
    );
    assert_eq!(code(&out), 3);
    assert_snapshot!(fx.stable(&out.stderr), @r"
    error: adapter not found: [bin]/gone/checkpoint-codex
    hint: install it: cargo install --locked --path crates/adapter-codex
    ");

    let misnamed = fx.adapter("claude");
    let out = checkpoint(
        fx.project.path(),
        &["install", "codex", "--adapter", &misnamed],
        "",
    );
    assert_eq!(code(&out), 2);
    let stderr = fx.stable(&out.stderr);
    assert!(
        stderr.contains("must be named checkpoint-codex"),
        "{stderr}"
    );
    assert!(!fx.path(".codex").exists());
}

/// `install claude --dry-run` shows every file it would write — the hooks file and the skill's
/// `SKILL.md` — and writes neither; once installed, a dry run has nothing to show.
#[test]
fn dry_run_shows_the_skill_it_would_write() {
    let fx = Fixture::new();
    let out = fx.stable(ok(&fx.install("claude", &["--dry-run"])));
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with("+++ ")).collect();
    assert_eq!(
        headers,
        [
            "+++ [project]/.claude/settings.json",
            "+++ [project]/.claude/skills/checkpoint-progress/SKILL.md"
        ],
        "{out}"
    );
    assert!(out.contains("+name: checkpoint-progress\n"), "{out}");
    assert!(!fx.path(".claude").exists());

    ok(&fx.install("claude", &[]));
    assert_eq!(
        ok(&fx.install("claude", &["--dry-run"])),
        "nothing to change\n"
    );
}

/// A settings file of one line of JSON stays one line, its numbers as written, and uninstall
/// gives it back byte for byte.
#[test]
fn a_one_line_settings_file_stays_one_line() {
    let fx = Fixture::new();
    git(fx.project.path(), &["init", "-q"]);
    let original =
        r#"{"model": "opus", "cleanupPeriodDays": 30.0, "big": 123456789012345678901234567890}"#;
    fx.write(".claude/settings.json", original);
    ok(&fx.install("claude", &[]));
    let installed = fx.read(".claude/settings.json");
    assert_eq!(installed.lines().count(), 1, "{installed}");
    assert!(!installed.ends_with('\n'));
    assert!(
        installed.starts_with(
            r#"{"model":"opus","cleanupPeriodDays":30.0,"big":123456789012345678901234567890,"hooks":{"#
        ),
        "{installed}"
    );
    let said = ok(&fx.uninstall("claude", &[]));
    assert_eq!(fx.read(".claude/settings.json"), original, "{said}");
}

/// A checkpoint saved outside a stop (`checkpoint save`, as at Gemini CLI's `/clear`) leaves
/// out the files install wrote, as a stop does: the restart context never asks the agent to
/// keep them as its work.
#[test]
fn a_saved_checkpoint_leaves_out_checkpoints_own_files() {
    let fx = Fixture::new();
    let repo = checkpoint_testkit::repo("python-passing");
    let dir = repo.path();
    let config = tempfile::tempdir().unwrap();
    let adapter = fx.adapter("gemini");
    let run = |args: &[&str]| ok(&crate::checkpoint_as(config.path(), dir, args, ""));
    run(&["install", "gemini", "--adapter", &adapter]);
    fs::write(dir.join("calc.py"), "# changed\n").unwrap();
    run(&["save", "before clear"]);
    let resumed = run(&["resume"]);
    let files: Vec<&str> = (resumed.lines())
        .skip_while(|l| !l.starts_with("Files modified"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert_snapshot!(files.join("\n"), @r"
    Files modified (do not recreate):
    - calc.py
    ");
}

/// A user's environment prefix on a hook command of ours survives a reinstall, which then
/// changes nothing more.
#[test]
fn reinstall_keeps_the_users_env_prefix() {
    let fx = Fixture::new();
    ok(&fx.install("claude", &[]));
    let file = ".claude/settings.json";
    let command = format!("{} --hook", fx.adapter("claude"));
    let prefixed = format!("CHECKPOINT_TESTS_TIMEOUT=5m {command}");
    fx.write(file, &fx.read(file).replacen(&command, &prefixed, 1));
    ok(&fx.install("claude", &[]));
    let settings: serde_json::Value = serde_json::from_str(&fx.read(file)).unwrap();
    assert_eq!(
        settings["hooks"]["Stop"][0]["hooks"][0]["command"],
        prefixed.as_str()
    );
    let again = ok(&fx.install("claude", &[]));
    assert!(again.contains("already installed"), "{again}");
}

/// `install codex --notify` writes the legacy `notify` line instead of hooks and keeps the
/// user's own config; another notify program is refused, untouched; uninstall gives the file
/// back as it was.
#[test]
fn codex_notify_writes_the_notify_line_and_keeps_the_users_config() {
    let fx = Fixture::new();
    let file = ".codex/config.toml";
    let theirs = "# mine\nmodel = \"o3\"\n\n[tui]\ntheme = \"dark\"\n";
    fx.write(file, theirs);
    let said = fx.stable(ok(&fx.install("codex", &["--notify"])));
    assert_snapshot!(said, @r"
    Made [bin]/checkpoint-codex Codex's notify program in [project]/.codex/config.toml: after each turn the gate runs, and a block is pasted into Codex's tmux pane.
    Previous content saved as [project]/.codex/config.toml.checkpoint.bak.
    ");
    let notify = format!("notify = [\"{}\", \"notify\"]\n", fx.adapter("codex"));
    assert_eq!(
        fx.read(file),
        theirs.replacen("\n\n[tui]", &format!("\n{notify}\n[tui]"), 1)
    );
    assert!(!fx.path(".codex/hooks.json").exists(), "no hooks beside it");
    ok(&fx.uninstall("codex", &[]));
    assert_eq!(fx.read(file), theirs);

    let other = format!("notify = [\"/usr/bin/notify-send\"]\n{theirs}");
    fx.write(file, &other);
    let out = fx.install("codex", &["--notify"]);
    assert_eq!(code(&out), 3, "{out:?}");
    assert_snapshot!(fx.stable(&out.stderr), @r#"
    error: [project]/.codex/config.toml: Codex already runs another notify program: ["/usr/bin/notify-send"]
    hint: Codex runs one notify program: remove that line to use checkpoint's (the file was left untouched)
    "#);
    assert_eq!(fx.read(file), other);
}
