// The client against the real runtime binary and its built-in demo server.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Session, SidecarError, type Delivery, type ToolDef, type StatusSnapshot, type SubscriptionEvent } from "../src/index.js";
import { runtimeBinary, tempDir, waitFor, writeConfig } from "./helpers.js";

let bin: string;
before(() => {
  bin = runtimeBinary();
});
// A failed assertion must not leave a sidecar running (the test process
// would wait for it): every session is killed at the end.
const started: Session[] = [];
after(async () => {
  await Promise.all(started.map((s) => s.kill("SIGKILL")));
});

/** A session over a configuration with the demo server ("demo") and, with mute, a server that never answers ("mute"). */
async function startSession(mute = false): Promise<{ s: Session; stderr: string[] }> {
  const dir = tempDir();
  const servers: Record<string, unknown> = { demo: { command: bin, args: ["demo-server", "--root", tempDir()] } };
  // sleep speaks no MCP: connecting to it waits until cancelled (or the
  // 30 s startup deadline).
  if (mute) servers.mute = { command: "sleep", args: ["600"] };
  const config = writeConfig(dir, servers);
  const stderr: string[] = [];
  const s = await Session.start({
    command: bin,
    args: ["--config", config],
    cwd: dir,
    env: { ...process.env, MCPRT_AGENT_DIR: tempDir() },
    stderr: (c) => stderr.push(c),
  });
  started.push(s);
  return { s, stderr };
}

test("hello carries the protocol and the agent-facing tools", async () => {
  const { s } = await startSession();
  try {
    assert.equal(s.hello.protocol, "mcprt-session");
    assert.equal(s.hello.version, 1);
    const names = s.hello.tools.map((t) => t.name);
    assert.ok(names.includes("mcp"), `tools: ${names}`);
    assert.ok(names.includes("mcp_events"), `tools: ${names}`);
    for (const t of s.hello.tools) assert.equal(typeof t.inputSchema, "object");
  } finally {
    assert.equal(await s.close(), 0);
  }
});

test("a tool call runs as the model would run it", async () => {
  const { s } = await startSession();
  try {
    const r = await s.callTool("mcp", { server: "demo", tool: "echo", args: { message: "ping from typescript" } });
    assert.equal(r.isError ?? false, false, r.text);
    assert.match(r.text, /ping from typescript/);
    const bad = await s.callTool("mcp", { server: "demo", tool: "echo", args: {} });
    assert.equal(bad.isError, true);
    assert.equal(bad.details?.error, "tool_error");
  } finally {
    await s.close();
  }
});

test("typed methods answer, and a failed one rejects with the runtime's code", async () => {
  const { s } = await startSession();
  try {
    assert.deepEqual(await s.servers(), ["demo"]);
    const info = await s.connect("demo");
    assert.equal(info.server, "demo");
    assert.ok(info.name.length > 0);
    const st = await s.getStatus();
    assert.equal(st.servers.find((x) => x.name === "demo")?.status, "connected");
    const tools = await s.call("tools");
    assert.ok(tools.some((t) => t.name === "mcp"));
    await assert.rejects(s.connect("nope"), (e: unknown) => e instanceof SidecarError && e.code === "server_not_found");
    await assert.rejects(s.call("getPrompt", { server: "demo", name: 5 as unknown as string }), (e: unknown) => e instanceof SidecarError && e.code === "invalid_args" && /params\.name/.test(e.message));
  } finally {
    await s.close();
  }
});

test("status and toolsChanged are pushed when they change", async () => {
  const { s } = await startSession();
  try {
    const connected = waitFor<StatusSnapshot>("a status with demo connected", (cb) => {
      s.on("status", cb);
      return () => s.off("status", cb);
    }, (st) => st.servers.some((x) => x.name === "demo" && x.status === "connected" && x.toolCount > 0));
    const changed = waitFor<ToolDef[]>("a tool set naming the demo's tools", (cb) => {
      s.on("toolsChanged", cb);
      return () => s.off("toolsChanged", cb);
    // The demo's whole catalog: its 6 tools and the tool reading its
    // resource (a listing may be pushed in parts before it).
    }, (ts) => ts.some((t) => t.name === "mcp" && /demo \(7 tools\)/.test(t.description)));
    await s.connect("demo");
    await connected;
    const tools = await changed;
    assert.deepEqual(s.tools, tools);
  } finally {
    await s.close();
  }
});

test("an aborted call is cancelled and answers", async () => {
  const { s } = await startSession(true);
  try {
    const ac = new AbortController();
    const connecting = s.connect("mute", false, { signal: ac.signal });
    // The request is in flight once the status says mute is connecting.
    await waitFor<StatusSnapshot>("mute connecting", (cb) => {
      s.on("status", cb);
      return () => s.off("status", cb);
    }, (st) => st.servers.some((x) => x.name === "mute" && x.status === "connecting"));
    ac.abort();
    await assert.rejects(connecting, (e: unknown) => e instanceof SidecarError && e.code === "aborted");
    // The session goes on.
    assert.equal((await s.connect("demo")).server, "demo");
    await assert.rejects(Promise.resolve().then(() => {
      const pre = new AbortController();
      pre.abort();
      return s.servers({ signal: pre.signal });
    }), (e: unknown) => e instanceof SidecarError && e.code === "aborted");
  } finally {
    await s.close();
  }
});

test("an events subscription delivers wakeups that start a turn as a follow-up", async () => {
  const { s } = await startSession();
  try {
    const delivered = waitFor<Delivery>("a clock.tick delivery", (cb) => {
      s.on("deliver", cb);
      return () => s.off("deliver", cb);
    }, (d) => d.kind === "mcp-events" && /clock\.tick/.test(d.text));
    const sub = await s.callTool("mcp_events", { action: "subscribe", server: "demo", name: "clock.tick" });
    assert.equal(sub.isError ?? false, false, sub.text);
    const d = await delivered;
    assert.equal(d.triggerTurn, true);
    assert.equal(d.deliverAs, "followUp");
  } finally {
    // Closing with a live subscription ends cleanly.
    assert.equal(await s.close(), 0);
  }
});

test("closing with a live subscription delivers nothing", async () => {
  const { s } = await startSession();
  const delivered: Delivery[] = [];
  s.on("deliver", (d) => delivered.push(d));
  const sub = await s.callTool("mcp_events", { action: "subscribe", server: "demo", name: "fs.changed" });
  assert.equal(sub.isError ?? false, false, sub.text);
  const listed = await s.callTool("mcp_events", { action: "list" });
  const subs = listed.details?.subscriptions as { status: string }[];
  assert.deepEqual(subs.map((x) => x.status), ["active"], listed.text);
  assert.equal(await s.close(), 0);
  assert.deepEqual(delivered, []);
});

test("an aborted tool call answers with an aborted result", async () => {
  const { s } = await startSession(true);
  try {
    const ac = new AbortController();
    const subscribing = s.callTool("mcp_events", { action: "subscribe", server: "mute", name: "anything" }, { signal: ac.signal });
    await waitFor<StatusSnapshot>("mute connecting", (cb) => {
      s.on("status", cb);
      return () => s.off("status", cb);
    }, (st) => st.servers.some((x) => x.name === "mute" && x.status === "connecting"));
    ac.abort();
    const r = await subscribing;
    assert.equal(r.isError, true, r.text);
    assert.equal(r.details?.error, "aborted", JSON.stringify(r));
  } finally {
    await s.close();
  }
});

test("a sidecar that cannot start, or exits before its hello, says why", async () => {
  await assert.rejects(Session.start({ command: "/nonexistent/runtime" }), (e: unknown) => e instanceof SidecarError && e.code === "spawn_failed" && /\/nonexistent\/runtime/.test(e.message));
  const missing = "/nonexistent/mcp.json";
  await assert.rejects(
    Session.start({ command: bin, args: ["--config", missing], stderr: "ignore", env: { ...process.env, MCPRT_AGENT_DIR: tempDir() } }),
    (e: unknown) => e instanceof SidecarError && e.code === "session_closed" && e.message.includes(missing),
  );
});

test("bad lines get errors without ids and the session goes on", async () => {
  const { s } = await startSession();
  try {
    const errors: SidecarError[] = [];
    s.on("protocolError", (e) => errors.push(e));
    const parseError = waitFor<SidecarError>("a parse_error", (cb) => {
      s.on("protocolError", cb);
      return () => s.off("protocolError", cb);
    }, (e) => e.code === "parse_error");
    s.sendRaw("this is not json");
    const e = await parseError;
    assert.equal(e.id, undefined);
    await assert.rejects(s.callTool("no_such_tool"), (x: unknown) => x instanceof SidecarError && x.code === "unknown_tool");
    assert.deepEqual(await s.servers(), ["demo"]);
  } finally {
    await s.close();
  }
});

test("close answers the calls in flight, then exits 0; later calls reject", async () => {
  const { s } = await startSession();
  const exits: (number | null)[] = [];
  s.on("exit", (c) => exits.push(c));
  const inFlight = s.callTool("mcp", { server: "demo", tool: "echo", args: { message: "last words" } });
  const code = await s.close();
  assert.equal(code, 0);
  assert.match((await inFlight).text, /last words/);
  assert.deepEqual(exits, [0]);
  await assert.rejects(s.servers(), (e: unknown) => e instanceof SidecarError && e.code === "session_closed");
});

test("the typed catalog, a typed read and a host's own subscription", async () => {
  const { s } = await startSession();
  const delivered: Delivery[] = [];
  s.on("deliver", (d) => delivered.push(d));
  try {
    await s.connect("demo");
    const resources = await s.call("serverResources", { server: "demo" });
    assert.deepEqual(resources.map((r) => [r.uri, r._meta]), [["demo://about", { "mcprt.dev/demo": true }]]);
    const templates = await s.call("serverTemplates", { server: "demo" });
    assert.equal(templates[0].uriTemplate, "demo://files/{name}");
    const read = await s.call("readResource", { server: "demo", uri: "demo://about" });
    assert.match(read.contents[0].text ?? "", /^Demo MCP server of mcprt/);

    const event = waitFor<SubscriptionEvent>("a clock.tick event", (cb) => {
      s.on("event", cb);
      return () => s.off("event", cb);
    }, (e) => e.name === "clock.tick");
    const sub = await s.call("subscribe", { server: "demo", event: "clock.tick" });
    const e = await event;
    assert.equal(e.subscription, sub.subscription);
    assert.equal(e.server, "demo");
    assert.deepEqual(await s.call("unsubscribe", { subscription: sub.subscription }), { stopped: true });
    assert.equal(delivered.length, 0, "a host's subscription woke the model");
  } finally {
    assert.equal(await s.close(), 0);
  }
});
