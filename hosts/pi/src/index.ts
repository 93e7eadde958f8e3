// The mcprt extension for Pi: runs `runtime session` (mcprt's sidecar),
// registers its agent-facing tools (mcp, mcp_events, the direct tools) with
// Pi, and turns its deliveries (events wakeups) into Pi messages that start
// a turn, as the events companion does in Pi: sendMessage with
// triggerTurn and deliverAs "followUp".
//
// Configuration, from the environment Pi runs in:
//   MCPRT_RUNTIME  the runtime binary (default: `runtime` on PATH)
//   MCPRT_CONFIG   a configuration file (`runtime --config FILE session`);
//                  without it the runtime reads the usual MCP files
//   MCPRT_STDERR   "inherit" shows the sidecar's stderr (default: hidden)

import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Session, type Delivery, type Notice, type SessionOptions, type ToolDef, type ToolResult } from "@mcprt/sidecar";

/** The customType of the messages this extension sends. */
export const MESSAGE_TYPE = "mcprt";

/** How to start the sidecar, from an environment. */
export function sessionOptions(env: NodeJS.ProcessEnv): SessionOptions {
  return {
    command: env.MCPRT_RUNTIME || "runtime",
    args: env.MCPRT_CONFIG ? ["--config", env.MCPRT_CONFIG] : [],
    stderr: env.MCPRT_STDERR === "inherit" ? "inherit" : "ignore",
  };
}

/** A sidecar tool result as Pi's tool result; a failed call throws, which is how Pi marks a tool error. */
export function toPiResult(r: ToolResult) {
  if (r.isError) throw new Error(r.text);
  const content: ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[] = [
    { type: "text", text: r.text },
  ];
  for (const img of r.images ?? []) content.push({ type: "image", data: img.data, mimeType: img.mimeType });
  return { content, details: r.details ?? {} };
}

export default async function mcprt(pi: ExtensionAPI): Promise<void> {
  let session: Session | undefined;
  let starting: Promise<Session> | undefined;
  let ctx: ExtensionContext | undefined;
  // Set once Pi tears the session down: nothing is delivered from then on.
  let closing = false;
  const registered = new Set<string>();
  // Tools this extension deactivated because the sidecar dropped them.
  const deactivated = new Set<string>();

  const notify = (text: string, level: Notice["level"]) => {
    ctx?.ui.notify(text, level);
  };
  const startFailed = (e: unknown) =>
    `mcprt: ${e instanceof Error ? e.message : String(e)} (MCPRT_RUNTIME names the runtime binary, MCPRT_CONFIG a configuration file)`;
  // Why the sidecar could not start at load, told once a session exists.
  let loadError: string | undefined;

  const register = (tools: ToolDef[]) => {
    const now = new Set(tools.map((t) => t.name));
    for (const def of tools) {
      registered.add(def.name);
      pi.registerTool({
        name: def.name,
        label: def.name,
        description: def.description,
        // The sidecar's schemas are JSON Schema, which Pi validates as is.
        parameters: def.inputSchema as never,
        async execute(_toolCallId, params, signal) {
          const s = await ensure();
          return toPiResult(await s.callTool(def.name, (params ?? {}) as Record<string, unknown>, { signal }));
        },
      });
    }
    // Tools the sidecar no longer offers stay registered (Pi 0.73 cannot
    // unregister) but inactive; one that comes back is active again.
    const gone = [...registered].filter((n) => !now.has(n));
    const back = [...deactivated].filter((n) => now.has(n));
    if (gone.length > 0 || back.length > 0) {
      const active = new Set(pi.getActiveTools());
      for (const n of gone) {
        active.delete(n);
        registered.delete(n);
        deactivated.add(n);
      }
      for (const n of back) {
        active.add(n);
        deactivated.delete(n);
      }
      pi.setActiveTools([...active]);
    }
  };

  const deliver = (d: Delivery) => {
    if (closing) return;
    pi.sendMessage(
      { customType: MESSAGE_TYPE, content: d.text, display: true, details: { kind: d.kind, details: d.details } },
      d.triggerTurn
        ? { triggerTurn: true, deliverAs: d.deliverAs === "steer" ? "steer" : "followUp" }
        : { deliverAs: "nextTurn" },
    );
  };

  const start = async (): Promise<Session> => {
    const s = await Session.start(sessionOptions(process.env));
    s.on("deliver", deliver);
    s.on("notice", (n) => notify(n.server ? `${n.server}: ${n.text}` : n.text, n.level));
    s.on("toolsChanged", register);
    s.on("exit", (code, signal) => {
      if (session === s) session = undefined;
      if (!closing) notify(`mcprt: the runtime exited (code ${code}, signal ${signal}); it restarts on the next MCP call`, "error");
    });
    register(s.tools);
    session = s;
    return s;
  };

  // ensure is the running sidecar, started again after it ended.
  const ensure = (): Promise<Session> => {
    if (session) return Promise.resolve(session);
    if (!starting) starting = start().finally(() => (starting = undefined));
    return starting;
  };

  pi.on("session_start", async (_event, c) => {
    ctx = c;
    closing = false;
    if (loadError) {
      notify(loadError, "error");
      loadError = undefined;
      return;
    }
    try {
      await ensure();
    } catch (e) {
      notify(startFailed(e), "error");
    }
  });

  pi.on("session_shutdown", async () => {
    closing = true;
    const s = session ?? (await starting?.catch(() => undefined));
    session = undefined;
    // Closing stdin ends the sidecar the protocol's way: calls in flight
    // answer, every subscription is cancelled without a wakeup, every
    // server process is reaped.
    if (s) await s.close();
  });

  // The tools are registered before the first prompt. A sidecar that
  // cannot start must not stop Pi (a failed load ends a Pi started with
  // -e): Pi runs without the tools and the user is told why; an MCP call
  // tries again.
  try {
    await ensure();
  } catch (e) {
    loadError = startFailed(e);
  }
}
