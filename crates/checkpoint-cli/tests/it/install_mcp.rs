//! `checkpoint install <agent> --mcp` / `checkpoint uninstall <agent> --mcp`: the MCP server
//! entries they write into each agent's MCP config, keep and remove.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::cargo::cargo_bin_cmd;
use insta::assert_snapshot;
use tempfile::TempDir;

use crate::code;

/// A project, a home directory and, outside both, a directory of fake adapters.
struct Fixture {
    project: TempDir,
    home: TempDir,
    bin: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let bin = tempfile::tempdir().unwrap();
        for agent in ["claude", "gemini", "codex"] {
            fs::write(bin.path().join(format!("checkpoint-{agent}")), "").unwrap();
        }
        Fixture {
            project: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            bin,
        }
    }

    /// `checkpoint ARGS` in the project, with HOME in the fixture's home, `env` set and the
    /// agents' other home variables unset.
    fn run(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut cmd = cargo_bin_cmd!("checkpoint");
        cmd.current_dir(self.project.path()).args(args);
        for var in ["CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "CODEX_HOME"] {
            cmd.env_remove(var);
        }
        cmd.env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .envs(env.iter().copied());
        cmd.output().expect("run checkpoint")
    }

    /// `checkpoint install <agent> --mcp --adapter <fake> ARGS`.
    fn install(&self, agent: &str, args: &[&str]) -> Output {
        let adapter = self.bin.path().join(format!("checkpoint-{agent}"));
        let adapter = adapter.to_str().unwrap();
        let mut all = vec!["install", agent, "--mcp", "--adapter", adapter];
        all.extend_from_slice(args);
        self.run(&all, &[])
    }

    /// `checkpoint uninstall <agent> --mcp ARGS`.
    fn uninstall(&self, agent: &str, args: &[&str]) -> Output {
        let mut all = vec!["uninstall", agent, "--mcp"];
        all.extend_from_slice(args);
        self.run(&all, &[])
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

    /// `text` with the temporary paths replaced by `[checkpoint]`, `[bin]`, `[home]` and
    /// `[project]`.
    fn stable(&self, text: impl AsRef<[u8]>) -> String {
        let text = String::from_utf8_lossy(text.as_ref());
        let canonical = |dir: &Path| dir.canonicalize().unwrap().display().to_string();
        text.replace(&checkpoint_exe(), "[checkpoint]")
            .replace(&canonical(self.bin.path()), "[bin]")
            .replace(&canonical(self.home.path()), "[home]")
            .replace(&canonical(self.project.path()), "[project]")
    }
}

/// The absolute path of the binary under test, as the server entries name it.
fn checkpoint_exe() -> String {
    Path::new(env!("CARGO_BIN_EXE_checkpoint"))
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

fn ok(out: &Output) -> String {
    assert_eq!(
        code(out),
        0,
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Where each agent's project MCP config is.
const FILES: [(&str, &str); 3] = [
    ("claude", ".mcp.json"),
    ("gemini", ".gemini/settings.json"),
    ("codex", ".codex/config.toml"),
];

#[test]
fn install_mcp_registers_the_server_for_each_agent() {
    let fx = Fixture::new();
    for (agent, _) in FILES {
        ok(&fx.install(agent, &[]));
    }
    assert_snapshot!(fx.stable(fx.read(".mcp.json")), @r#"
    {
      "mcpServers": {
        "checkpoint": {
          "type": "stdio",
          "command": "[checkpoint]",
          "args": [
            "mcp"
          ]
        }
      }
    }
    "#);
    assert_snapshot!(fx.stable(fx.read(".codex/config.toml")), @r#"
    [mcp_servers.checkpoint]
    command = "[checkpoint]"
    args = ["mcp"]
    "#);
    // Gemini's servers go into the settings file beside the hooks.
    let gemini: serde_json::Value =
        serde_json::from_str(&fx.read(".gemini/settings.json")).unwrap();
    let keys: Vec<&str> = gemini
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["hooks", "mcpServers"]);
    let servers = serde_json::to_string_pretty(&gemini["mcpServers"]).unwrap();
    assert_snapshot!(fx.stable(servers), @r#"
    {
      "checkpoint": {
        "command": "[checkpoint]",
        "args": [
          "mcp"
        ]
      }
    }
    "#);
    // The hooks files are the ones `install` writes without --mcp.
    assert!(
        fx.read(".claude/settings.json")
            .contains("checkpoint-claude")
    );
    assert!(fx.read(".codex/hooks.json").contains("checkpoint-codex"));
}

#[test]
fn install_mcp_says_what_it_registered_after_the_hooks() {
    let fx = Fixture::new();
    let stdout = fx.stable(ok(&fx.install("claude", &[])));
    assert!(
        stdout.starts_with("Installed checkpoint hooks for Claude Code"),
        "{stdout}"
    );
    let (_, mcp) = stdout
        .split_once("\nRegistered")
        .expect("an MCP line after the hooks");
    assert_snapshot!(format!("Registered{mcp}"), @r"
    Registered the checkpoint MCP server for Claude Code in [project]/.mcp.json: [checkpoint] mcp.
    Next: Claude Code asks once before it starts a server from the project's .mcp.json; approve `checkpoint` (`claude mcp list` shows it).
    Checkpoint's files in this project: .claude/settings.json, .claude/skills/checkpoint-progress/SKILL.md, .mcp.json. Commit them to share the hooks with everyone working here; until then the stop gate does not count them (nor the `*.checkpoint.bak` backups) as uncommitted work. `checkpoint uninstall --all` removes them.
    ");
}

#[test]
fn install_mcp_twice_changes_nothing() {
    let fx = Fixture::new();
    for (agent, file) in FILES {
        ok(&fx.install(agent, &[]));
        let once = fx.read(file);
        let stdout = ok(&fx.install(agent, &[]));
        assert!(
            stdout.contains("MCP server for") && stdout.contains("is already registered in"),
            "{stdout}"
        );
        assert_eq!(fx.read(file), once, "{agent}");
        let mut backup = fx.path(file).into_os_string();
        backup.push(".checkpoint.bak");
        if agent != "gemini" {
            // The hooks live elsewhere: nothing rewrote the MCP file.
            assert!(!Path::new(&backup).exists(), "{agent}");
        }
    }
}

#[test]
fn foreign_servers_and_settings_survive_and_uninstall_removes_only_ours() {
    let fx = Fixture::new();
    let claude = r#"{
  "mcpServers": {
    "github": {
      "type": "http",
      "url": "https://example.invalid/mcp"
    }
  },
  "other": true
}
"#;
    let codex = r#"# my Codex settings
model = "o3" # pinned

[mcp_servers.docs]
command = "npx" # the docs server
args = ["-y", "docs-mcp"]

[profiles.fast]
model = "o4-mini"
"#;
    fx.write(".mcp.json", claude);
    fx.write(".codex/config.toml", codex);

    ok(&fx.install("claude", &[]));
    ok(&fx.install("codex", &[]));
    assert_snapshot!(fx.stable(fx.read(".mcp.json")), @r#"
    {
      "mcpServers": {
        "github": {
          "type": "http",
          "url": "https://example.invalid/mcp"
        },
        "checkpoint": {
          "type": "stdio",
          "command": "[checkpoint]",
          "args": [
            "mcp"
          ]
        }
      },
      "other": true
    }
    "#);
    assert_snapshot!(fx.stable(fx.read(".codex/config.toml")), @r#"
    # my Codex settings
    model = "o3" # pinned

    [mcp_servers.docs]
    command = "npx" # the docs server
    args = ["-y", "docs-mcp"]

    [mcp_servers.checkpoint]
    command = "[checkpoint]"
    args = ["mcp"]

    [profiles.fast]
    model = "o4-mini"
    "#);
    assert_eq!(fx.read(".mcp.json.checkpoint.bak"), claude);
    assert_eq!(fx.read(".codex/config.toml.checkpoint.bak"), codex);

    let stdout = ok(&fx.uninstall("claude", &[]));
    assert!(
        stdout.contains("Removed the checkpoint MCP server for Claude Code from"),
        "{stdout}"
    );
    ok(&fx.uninstall("codex", &[]));
    assert_eq!(fx.read(".mcp.json"), claude);
    assert_eq!(fx.read(".codex/config.toml"), codex);

    let stdout = ok(&fx.uninstall("codex", &[]));
    assert!(
        stdout.contains("No checkpoint MCP server for Codex CLI in"),
        "{stdout}"
    );
    assert_eq!(fx.read(".codex/config.toml"), codex);
}

#[test]
fn gemini_keeps_hooks_and_servers_in_one_file_with_one_backup_of_the_users_content() {
    let fx = Fixture::new();
    let settings = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a-server\"\n    }\n  }\n}\n";
    let backup = ".gemini/settings.json.checkpoint.bak";
    fx.write(".gemini/settings.json", settings);
    let stdout = fx.stable(ok(&fx.install("gemini", &[])));
    assert_eq!(
        stdout.matches("Previous content saved as").count(),
        1,
        "{stdout}"
    );
    assert_eq!(fx.read(backup), settings, "the backup is the user's file");
    let installed = fx.read(".gemini/settings.json");
    assert!(installed.contains("checkpoint-gemini") && installed.contains("[\n        \"mcp\""));

    ok(&fx.uninstall("gemini", &[]));
    assert_eq!(fx.read(".gemini/settings.json"), settings);
    assert!(
        !fx.path(backup).exists(),
        "uninstall removes install's backup"
    );

    ok(&fx.install("gemini", &[]));
    ok(&fx.install("gemini", &[]));
    assert_eq!(
        fx.read(backup),
        settings,
        "a second install keeps the first backup"
    );
    let stdout = ok(&fx.uninstall("gemini", &["--keep-backups"]));
    assert!(!stdout.contains("Removed the backup"), "{stdout}");
    assert_eq!(fx.read(backup), settings);
}

#[test]
fn a_foreign_server_named_checkpoint_is_never_replaced_or_removed() {
    let fx = Fixture::new();
    let claude = "{\n  \"mcpServers\": {\n    \"checkpoint\": {\n      \"command\": \"npx\",\n      \"args\": [\"other-checkpoint\"]\n    }\n  }\n}\n";
    let codex = "[mcp_servers.checkpoint]\nurl = \"https://example.invalid/mcp\"\n";
    fx.write(".mcp.json", claude);
    fx.write(".codex/config.toml", codex);

    let out = fx.install("claude", &[]);
    assert_eq!(code(&out), 3);
    assert_snapshot!(fx.stable(&out.stderr), @r"
    error: [project]/.mcp.json: an MCP server named `checkpoint` already runs `npx`
    hint: rename or remove that server, then run this again (the file was left untouched)
    ");
    let out = fx.install("codex", &[]);
    assert_eq!(code(&out), 3);
    let stderr = fx.stable(&out.stderr);
    assert!(
        stderr.contains("already runs `https://example.invalid/mcp`"),
        "{stderr}"
    );

    let stdout = fx.stable(ok(&fx.uninstall("claude", &[])));
    assert!(
        stdout.contains(
            "The MCP server `checkpoint` in [project]/.mcp.json runs `npx`, not checkpoint: left as it is."
        ),
        "{stdout}"
    );
    ok(&fx.uninstall("codex", &[]));
    assert_eq!(fx.read(".mcp.json"), claude);
    assert_eq!(fx.read(".codex/config.toml"), codex);
}

#[test]
fn reinstalling_from_another_path_updates_our_entry_and_keeps_its_extras() {
    let fx = Fixture::new();
    fx.write(
        ".codex/config.toml",
        "[mcp_servers.checkpoint]\ncommand = \"/old/bin/checkpoint\" # moved\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n",
    );
    fx.write(
        ".mcp.json",
        "{\"mcpServers\": {\"checkpoint\": {\"command\": \"/old/bin/checkpoint\", \"args\": [\"mcp\"], \"env\": {\"A\": \"1\"}}}}",
    );
    ok(&fx.install("codex", &[]));
    ok(&fx.install("claude", &[]));
    assert_snapshot!(fx.stable(fx.read(".codex/config.toml")), @r#"
    [mcp_servers.checkpoint]
    command = "[checkpoint]" # moved
    args = ["mcp"]
    startup_timeout_sec = 20
    "#);
    // One line stays one line.
    assert_snapshot!(fx.stable(fx.read(".mcp.json")), @r#"{"mcpServers":{"checkpoint":{"command":"[checkpoint]","args":["mcp"],"env":{"A":"1"},"type":"stdio"}}}"#);
}

#[test]
fn user_scope_registers_in_each_agents_user_config() {
    let fx = Fixture::new();
    let custom = tempfile::tempdir().unwrap();
    let home = fx.home.path().canonicalize().unwrap();
    let cases: [(&str, Option<&str>, PathBuf); 5] = [
        ("claude", None, home.join(".claude.json")),
        (
            "claude",
            Some("CLAUDE_CONFIG_DIR"),
            custom.path().join(".claude.json"),
        ),
        ("gemini", None, home.join(".gemini/settings.json")),
        ("codex", None, home.join(".codex/config.toml")),
        (
            "codex",
            Some("CODEX_HOME"),
            custom.path().join("config.toml"),
        ),
    ];
    for (agent, var, expected) in cases {
        let env: Vec<(&str, &Path)> = var.map(|var| (var, custom.path())).into_iter().collect();
        let adapter = fx.bin.path().join(format!("checkpoint-{agent}"));
        let args = [
            "install",
            agent,
            "--user",
            "--mcp",
            "--adapter",
            adapter.to_str().unwrap(),
        ];
        let stdout = ok(&fx.run(&args, &env));
        assert!(
            stdout.contains(&format!("in {}: ", expected.display())),
            "{agent} {var:?}: {stdout}"
        );
        let text = fs::read_to_string(&expected).unwrap();
        assert!(text.contains(&checkpoint_exe()), "{text}");

        let stdout = ok(&fx.run(&["uninstall", agent, "--user", "--mcp"], &env));
        assert!(
            stdout.contains("Removed the checkpoint MCP server"),
            "{stdout}"
        );
        // The file held nothing else: install created it, uninstall removes it.
        assert!(!expected.exists(), "{agent} {var:?}: {stdout}");
    }
    // Nothing went into the project.
    assert_eq!(fs::read_dir(fx.project.path()).unwrap().count(), 0);
}

/// Droid reads its servers from `mcp.json` beside its settings, the project's and the user's
/// (`$FACTORY_HOME_OVERRIDE/.factory/` when set): where `droid mcp add` writes them, in its shape.
#[test]
fn droid_registers_the_server_in_its_mcp_json() {
    let fx = Fixture::new();
    let adapter = fx.bin.path().join("checkpoint-droid");
    fs::write(&adapter, "").unwrap();
    ok(&fx.install("droid", &[]));
    assert_snapshot!(fx.stable(fx.read(".factory/mcp.json")), @r#"
    {
      "mcpServers": {
        "checkpoint": {
          "type": "stdio",
          "command": "[checkpoint]",
          "args": [
            "mcp"
          ]
        }
      }
    }
    "#);
    ok(&fx.uninstall("droid", &[]));
    assert!(
        !fx.path(".factory").exists(),
        "nothing of the install is left"
    );

    let custom = tempfile::tempdir().unwrap();
    let env = [("FACTORY_HOME_OVERRIDE", custom.path())];
    let args = ["install", "droid", "--user", "--mcp", "--adapter"];
    let args: Vec<&str> = args
        .into_iter()
        .chain([adapter.to_str().unwrap()])
        .collect();
    ok(&fx.run(&args, &env));
    let text = fs::read_to_string(custom.path().join(".factory/mcp.json")).unwrap();
    assert!(text.contains(&checkpoint_exe()), "{text}");
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let fx = Fixture::new();
    let out = fx.install("codex", &["--dry-run"]);
    let stdout = fx.stable(ok(&out));
    assert!(
        stdout.ends_with(
            "--- /dev/null\n+++ [project]/.codex/config.toml\n@@ -0,0 +1,3 @@\n+[mcp_servers.checkpoint]\n+command = \"[checkpoint]\"\n+args = [\"mcp\"]\n"
        ),
        "{stdout}"
    );
    assert_eq!(fs::read_dir(fx.project.path()).unwrap().count(), 0);
}

#[test]
fn unparseable_configs_are_refused_and_left_untouched() {
    let fx = Fixture::new();
    let claude = "{\n  // mine\n  \"mcpServers\": {}\n}\n";
    let codex = "[mcp_servers\ncommand = 1\n";
    fx.write(".mcp.json", claude);
    fx.write(".codex/config.toml", codex);
    for agent in ["claude", "codex"] {
        let out = fx.install(agent, &[]);
        assert_eq!(code(&out), 3, "{agent}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 2, "{stderr}");
        assert!(
            stderr.contains("hint: the file was left untouched"),
            "{stderr}"
        );
    }
    assert_eq!(fx.read(".mcp.json"), claude);
    assert_eq!(fx.read(".codex/config.toml"), codex);
}

#[test]
fn mcp_is_refused_for_git() {
    let fx = Fixture::new();
    let out = fx.run(&["install", "git", "--mcp"], &[]);
    assert_eq!(code(&out), 2);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--mcp needs an agent"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
