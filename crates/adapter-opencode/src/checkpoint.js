// checkpoint's OpenCode plugin, written by `checkpoint install opencode`.
// It only carries OpenCode's events to checkpoint's adapter and the adapter's answers back; all
// judging happens in the adapter. `checkpoint uninstall opencode` removes this file (unless it
// was edited). Wire format: crates/adapter-opencode/src/lib.rs in checkpoint's repository.
import { spawn } from "node:child_process";

/** The adapter's command line, run with `sh -c`. */
const COMMAND = __COMMAND__;
/** How long each event may take, in milliseconds; the adapter's process group is then killed. */
const TIMEOUTS = __TIMEOUTS__;
/** How long the provider list (the models' windows) is waited for, in milliseconds. */
const CATALOG_TIMEOUT = 2000;
/** The most of the adapter's stdout (and stderr) that is read. */
const MAX_OUTPUT = 1 << 20;

/**
 * Runs the adapter with one event: the payload as JSON on its stdin, its answer (a JSON object)
 * from its stdout. Fails open: any failure, a timeout or a malformed answer gives `{}`.
 */
function ask(event, payload, log) {
  return new Promise((resolve) => {
    try {
      const child = spawn("/bin/sh", ["-c", COMMAND], {
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      const out = [];
      const err = [];
      let size = 0;
      const keep = (chunks) => (chunk) => {
        size += chunk.length;
        if (size <= 2 * MAX_OUTPUT) chunks.push(chunk);
      };
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
      }, TIMEOUTS[event] ?? 30000);
      child.stdout.on("data", keep(out));
      child.stderr.on("data", keep(err));
      child.stdin.on("error", () => {});
      child.on("error", () => {
        clearTimeout(timer);
        resolve({});
      });
      child.on("close", () => {
        clearTimeout(timer);
        const said = Buffer.concat(err).toString("utf8").trim();
        if (said) log(said);
        try {
          const answer = JSON.parse(Buffer.concat(out).subarray(0, MAX_OUTPUT).toString("utf8"));
          resolve(answer && typeof answer === "object" && !Array.isArray(answer) ? answer : {});
        } catch {
          resolve({});
        }
      });
      child.stdin.end(JSON.stringify({ hook_event_name: event, ...payload }));
    } catch {
      resolve({});
    }
  });
}

export const CheckpointPlugin = async ({ client, directory }) => {
  const log = (message) => {
    try {
      client.app.log({ body: { service: "checkpoint", level: "warn", message } }).catch(() => {});
    } catch {}
  };
  const notify = (answer) => {
    if (typeof answer.notice !== "string") return;
    log(answer.notice);
    try {
      client.tui
        .showToast({ body: { title: "checkpoint", message: answer.notice, variant: "warning" } })
        .catch(() => {});
    } catch {}
  };
  const created = new Set(); // sessions created while this plugin ran
  const subagents = new Set(); // sessions with a parent: a subagent's, judged by its parent's turn
  const started = new Set(); // sessions given their start context
  const assistant = new Set(); // ids of assistant messages
  const summarised = new Set(); // sessions whose last assistant message is a compaction summary
  const replies = new Map(); // session -> the assistant's last text
  const usage = new Map(); // session -> the last answer's tokens in the window, and its model
  let catalog; // the providers OpenCode knows, with their models' limits (asked once)
  const retrying = new Map(); // session -> the block sent back as its next prompt
  const pending = new Set(); // the stops being judged: OpenCode's disposal waits for them
  let disposing = false; // OpenCode is disposing of the instance (a lone `opencode run` ended)
  const payload = (session) => ({ session_id: session, cwd: directory });
  /** The context usage of the session's last answer, with its model's window when known. */
  const contextUsage = async (session) => {
    const last = usage.get(session);
    if (!last) return undefined;
    catalog ??= new Promise((resolve) => {
      // Asked of OpenCode's own server; a tool's result never waits on it for long.
      const timer = setTimeout(() => resolve([]), CATALOG_TIMEOUT);
      const done = (providers) => {
        clearTimeout(timer);
        resolve(providers);
      };
      Promise.resolve()
        .then(() => client.config.providers())
        .then((answer) => done(answer?.data?.providers ?? []), () => done([]));
    });
    const providers = await catalog;
    const provider = Array.isArray(providers) ? providers.find((p) => p?.id === last.provider) : undefined;
    const window = provider?.models?.[last.model]?.limit?.context;
    return Number.isSafeInteger(window) && window > 0 ? { used: last.used, window } : { used: last.used };
  };

  return {
    "chat.message": async (input, output) => {
      const session = input.sessionID;
      if (subagents.has(session)) return;
      const parts = output.parts;
      const text = parts.find((part) => part.type === "text" && !part.synthetic);
      const context = [];
      if (!started.has(session)) {
        started.add(session);
        const source = created.has(session) ? "startup" : "resume";
        const answer = await ask("session.start", { ...payload(session), source }, log);
        notify(answer);
        if (typeof answer.context === "string") context.push(answer.context);
      }
      const prompt = parts
        .filter((part) => part.type === "text" && !part.synthetic)
        .map((part) => part.text)
        .join("\n");
      if (retrying.get(session) !== prompt) retrying.delete(session);
      const answer = await ask("chat.message", { ...payload(session), prompt }, log);
      notify(answer);
      if (typeof answer.context === "string") context.push(answer.context);
      if (context.length > 0 && text) {
        parts.push({ ...text, id: `${text.id}ckpt`, text: context.join("\n\n"), synthetic: true });
      }
    },
    "tool.execute.after": async (input, output) => {
      const answer = await ask(
        "tool.execute.after",
        {
          ...payload(input.sessionID),
          tool_name: input.tool,
          tool_input: input.args,
          context_usage: await contextUsage(input.sessionID),
        },
        log,
      );
      notify(answer);
      if (typeof answer.context === "string" && typeof output.output === "string") {
        output.output += `\n\n${answer.context}`;
      }
    },
    "experimental.session.compacting": async (input) => {
      notify(await ask("session.compacting", { ...payload(input.sessionID), trigger: "auto" }, log));
    },
    event: async ({ event }) => {
      const properties = event.properties ?? {};
      switch (event.type) {
        case "session.created":
          created.add(properties.info?.id);
          if (properties.info?.parentID) subagents.add(properties.info.id);
          return;
        case "message.updated": {
          const info = properties.info;
          if (info?.role !== "assistant") return;
          // A compaction's summary ends no turn of the model's.
          if (info.summary === true) summarised.add(info.sessionID);
          else {
            summarised.delete(info.sessionID);
            assistant.add(info.id);
            // What the answer's request put into the window (its output is not in it yet).
            const tokens = info.tokens ?? {};
            const used = [tokens.input, tokens.cache?.read, tokens.cache?.write]
              .filter(Number.isSafeInteger)
              .reduce((sum, n) => sum + n, 0);
            if (used > 0) usage.set(info.sessionID, { used, provider: info.providerID, model: info.modelID });
          }
          return;
        }
        case "message.part.updated": {
          const part = properties.part;
          if (part?.type === "text" && !part.synthetic && assistant.has(part.messageID) && part.text?.trim()) {
            replies.set(part.sessionID, part.text);
          }
          return;
        }
        case "session.idle": {
          const session = properties.sessionID;
          if (!session || subagents.has(session) || summarised.has(session)) return;
          const judged = idle(session);
          pending.add(judged);
          await judged;
          pending.delete(judged);
          return;
        }
      }
    },
    // A lone `opencode run` disposes of the instance at the session's first idle: the stop being
    // judged then is waited for (bounded by the adapter's timeout), so that its block is stored
    // in the session before OpenCode exits.
    dispose: async () => {
      disposing = true;
      await Promise.allSettled([...pending]);
    },
  };

  /**
   * Judges the session's stop; a block is sent back to the session as its next prompt. While
   * OpenCode disposes of the instance, nothing more will run: the block is stored in the session
   * without a reply (`noReply`), and awaited, so that the model reads it with the session's next
   * prompt (`opencode run --session <id>`). Either way OpenCode fires `chat.message` with it, which
   * tells the adapter that the block was delivered.
   */
  async function idle(session) {
    const answer = await ask(
      "session.idle",
      {
        ...payload(session),
        stop_hook_active: retrying.has(session),
        last_assistant_message: replies.get(session),
      },
      log,
    );
    notify(answer);
    if (typeof answer.block !== "string") {
      retrying.delete(session);
      return;
    }
    retrying.set(session, answer.block);
    const parts = [{ type: "text", text: answer.block }];
    try {
      const sent = disposing
        ? await client.session.prompt({ path: { id: session }, body: { parts, noReply: true } })
        : await client.session.promptAsync({ path: { id: session }, body: { parts } });
      if (sent?.error) throw new Error(JSON.stringify(sent.error));
    } catch (error) {
      log(`could not send the gate's message back to the session: ${error}`);
    }
  }
};
