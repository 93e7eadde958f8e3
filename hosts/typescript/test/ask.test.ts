// A server's questions reach the host through the ask option
// (runtime session --ask-host), against a small raw MCP server on stdio.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Session, type Ask } from "../src/index.js";
import { runtimeBinary, tempDir, writeConfig } from "./helpers.js";

// A stdio MCP server (2025-11-25) with one tool, "ask", that asks the
// client for a name (form elicitation) and answers with the action and
// the name it got.
const server = `
const rl = require("node:readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
let call;
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "asker", version: "1" } } });
  else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "ask", description: "asks a name", inputSchema: { type: "object" } }] } });
  else if (m.method === "tools/call") {
    call = m.id;
    send({ jsonrpc: "2.0", id: "e1", method: "elicitation/create", params: { mode: "form", message: "your name?", requestedSchema: { type: "object", properties: { name: { type: "string", title: "Name" } }, required: ["name"] } } });
  } else if (m.id === "e1") {
    const r = m.result || {};
    send({ jsonrpc: "2.0", id: call, result: { content: [{ type: "text", text: (r.action || "error") + " " + ((r.content || {}).name || "") }] } });
  } else if (m.id !== undefined && m.method) send({ jsonrpc: "2.0", id: m.id, result: {} });
});
`;

let bin: string;
before(() => {
  bin = runtimeBinary();
});
const started: Session[] = [];
after(async () => {
  await Promise.all(started.map((s) => s.kill("SIGKILL")));
});

test("a server's question goes to the ask option and its answer to the server", async () => {
  const dir = tempDir();
  const script = join(dir, "asker.cjs");
  writeFileSync(script, server);
  const config = writeConfig(dir, { asker: { command: process.execPath, args: [script] } });
  const asked: Ask[] = [];
  const s = await Session.start({
    command: bin,
    args: ["--config", config],
    cwd: dir,
    env: { ...process.env, MCPRT_AGENT_DIR: tempDir() },
    stderr: "ignore",
    ask: async (q) => {
      asked.push(q);
      return { action: "accept", content: { name: "Ada" } };
    },
  });
  started.push(s);
  const res = await s.callTool("mcp", { server: "asker", tool: "ask", args: {} });
  assert.match(res.text, /^accept Ada/);
  assert.equal(asked.length, 1);
  const q = asked[0];
  assert.equal(q.kind, "elicitation");
  assert.equal(q.server, "asker");
  if (q.kind === "elicitation") {
    assert.equal(q.message, "your name?");
    assert.deepEqual(q.fields.map((f) => [f.name, f.kind, f.required, f.title]), [["name", "string", true, "Name"]]);
  }
  await s.close();
});
