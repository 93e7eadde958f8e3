// A real Pi (the pinned @mariozechner/pi-coding-agent) in RPC mode, with
// the mcprt extension, the real runtime binary and its demo servers, and a
// scripted OpenAI-compatible model on 127.0.0.1.

import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeModel, textOf, type ChatMessage, type Answer } from "./fake-model.js";
import { PiRpc, extensionEntry, processesMentioning, runtimeBinary, tempDir, type RpcEvent } from "./harness.js";

/** The scripted model: tool calls on the test's prompts, a short text otherwise. */
function script(messages: ChatMessage[]): Answer {
  const last = messages[messages.length - 1];
  if (last?.role === "tool") return { text: `tool said: ${textOf(last).slice(0, 400)}` };
  const said = textOf(last);
  if (said.includes("PLEASE_ECHO")) {
    return { calls: [{ name: "mcp", args: { tool: "demo_echo", args: { message: "ping from pi" } } }] };
  }
  if (said.includes("PLEASE_ADD")) return { calls: [{ name: "demo_add", args: { a: 2, b: 40 } }] };
  if (said.includes("PLEASE_SUBSCRIBE")) {
    return {
      calls: [
        { name: "mcp_events", args: { action: "subscribe", server: "demo", name: "fs.changed" } },
        { name: "mcp_events", args: { action: "subscribe", server: "steady", name: "fs.changed" } },
      ],
    };
  }
  return { text: "noted" };
}

const isType = (t: string) => (e: RpcEvent) => e.type === t;

test("Pi with the mcprt extension: mcp and a direct tool, an event wakeup, a server's death, a quiet shutdown", { timeout: 240_000 }, async () => {
  const bin = runtimeBinary();
  const work = tempDir();
  const demoRoot = join(work, "demo-root");
  const steadyRoot = join(work, "steady-root");
  mkdirSync(demoRoot);
  mkdirSync(steadyRoot);
  const dead = join(work, "demo-is-dead");
  const pidFile = join(work, "demo.pid");
  // The demo server records its pid; once `dead` exists it cannot start
  // again, so every reconnect fails.
  const wrapper = join(work, "demo.sh");
  writeFileSync(wrapper, `#!/bin/sh\n[ -e '${dead}' ] && exit 3\necho $$ > '${pidFile}'\nexec '${bin}' demo-server --root '${demoRoot}'\n`);
  chmodSync(wrapper, 0o755);
  const config = join(work, "mcp.json");
  writeFileSync(config, JSON.stringify({
    mcpServers: {
      demo: { command: wrapper, args: [], directTools: ["add"] },
      steady: { command: bin, args: ["demo-server", "--root", steadyRoot] },
    },
  }));

  const model = new FakeModel(script);
  const baseUrl = await model.listen();
  const agentDir = join(work, "pi-agent");
  mkdirSync(agentDir);
  writeFileSync(join(agentDir, "models.json"), JSON.stringify({
    providers: {
      fake: {
        baseUrl, api: "openai-completions", apiKey: "not-a-real-key",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: "scripted", name: "Scripted", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
      },
    },
  }));

  const pi = new PiRpc(
    ["--no-session", "--offline", "--no-extensions", "--no-skills", "-e", extensionEntry, "--provider", "fake", "--model", "scripted"],
    {
      cwd: work,
      env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, MCPRT_RUNTIME: bin, MCPRT_CONFIG: config, MCPRT_AGENT_DIR: join(work, "mcprt-agent") },
    },
  );
  try {
    // 1. The model calls mcp and gets the result.
    pi.send({ id: "p1", type: "prompt", message: "PLEASE_ECHO" });
    let end = await pi.waitFor("the first agent_end", isType("agent_end"));
    const echoEnd = pi.events.find((e) => e.type === "tool_execution_end" && e.toolName === "mcp");
    assert.ok(echoEnd, "mcp ran");
    assert.equal(echoEnd.isError, false, JSON.stringify(echoEnd));
    assert.equal(model.requests.length, 2);
    const toolMsg = model.requests[1].messages.at(-1);
    assert.equal(toolMsg?.role, "tool");
    assert.match(textOf(toolMsg), /echo: ping from pi/);
    for (const name of ["mcp", "mcp_events"]) assert.ok(model.requests[0].tools.includes(name), `the model sees ${name}: ${model.requests[0].tools}`);

    // 1b. The demo's direct tool, known once the demo server was listed
    // (a toolsChanged: there is no metadata cache at start, the runtime
    // lists the server in the background or on the first call), is a Pi
    // tool the model calls by name.
    const addAsked = model.requests.length;
    pi.send({ id: "p1b", type: "prompt", message: "PLEASE_ADD" });
    end = await pi.waitFor("the direct tool's agent_end", isType("agent_end"), end + 1);
    assert.ok(model.requests[addAsked].tools.includes("demo_add"), `the model sees demo_add: ${model.requests[addAsked].tools}`);
    const addEnd = pi.events.find((e) => e.type === "tool_execution_end" && e.toolName === "demo_add");
    assert.ok(addEnd, "demo_add ran");
    assert.equal(addEnd.isError, false, JSON.stringify(addEnd));
    assert.match(textOf(model.requests.at(-1)!.messages.at(-1)), /42/);

    // 2. Subscribe; the turn ends.
    pi.send({ id: "p2", type: "prompt", message: "PLEASE_SUBSCRIBE" });
    end = await pi.waitFor("the second agent_end", isType("agent_end"), end + 1);
    const subs = pi.events.filter((e) => e.type === "tool_execution_end" && e.toolName === "mcp_events");
    assert.equal(subs.length, 2);
    for (const s of subs) assert.equal(s.isError, false, JSON.stringify(s));
    const afterSubscribe = model.requests.length;

    // 3. An event alone starts a turn after the last one ended.
    writeFileSync(join(demoRoot, "wake-up.txt"), "hello\n");
    let start = await pi.waitFor("a turn started by the event", isType("agent_start"), end + 1);
    end = await pi.waitFor("its end", isType("agent_end"), start + 1);
    assert.equal(model.requests.length, afterSubscribe + 1);
    const woke = textOf(model.requests[afterSubscribe].messages.at(-1));
    assert.match(woke, /wake-up\.txt/);
    assert.match(woke, /fs\.changed/);

    // 4. The demo server dies and cannot come back: one interruption
    // wakeup, then, after the retries, one final wakeup.
    const beforeDeath = model.requests.length;
    writeFileSync(dead, "");
    process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGKILL");
    start = await pi.waitFor("the interruption wakeup", isType("agent_start"), end + 1);
    end = await pi.waitFor("its end", isType("agent_end"), start + 1);
    assert.equal(model.requests.length, beforeDeath + 1);
    const interrupted = textOf(model.requests[beforeDeath].messages.at(-1));
    assert.match(interrupted, /reconnecting/, interrupted);
    // Retries take 1+2+4+8+16 s; none of them wakes the model.
    start = await pi.waitFor("the final wakeup", isType("agent_start"), end + 1, 120_000);
    end = await pi.waitFor("its end", isType("agent_end"), start + 1);
    assert.equal(model.requests.length, beforeDeath + 2, "exactly two wakeups for the death");
    const final = textOf(model.requests[beforeDeath + 1].messages.at(-1));
    assert.match(final, /reconnect attempts exhausted/, final);
    assert.doesNotMatch(final, /steady/, "the steady server's subscription is untouched");

    // 5. Shutdown (with the steady subscription live) starts no turn and
    // leaves no runtime process behind.
    const beforeShutdown = model.requests.length;
    const eventsBeforeShutdown = pi.events.length;
    pi.closeInput();
    assert.equal(await pi.exited, 0, pi.stderr.join(""));
    assert.equal(model.requests.length, beforeShutdown, "no model request after shutdown");
    assert.deepEqual(pi.events.slice(eventsBeforeShutdown).filter((e) => e.type === "agent_start"), []);
    assert.deepEqual(processesMentioning(bin), [], "every runtime process is gone");
  } finally {
    pi.kill();
    // After a failure, no runtime outlives the test.
    for (const pid of processesMentioning(bin)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    await model.close();
  }
});

test("Pi keeps running, and says why, when the runtime cannot start", { timeout: 120_000 }, async () => {
  const work = tempDir();
  const agentDir = join(work, "pi-agent");
  mkdirSync(agentDir);
  const missing = join(work, "no-such-runtime");
  const pi = new PiRpc(["--no-session", "--offline", "--no-extensions", "--no-skills", "-e", extensionEntry], {
    cwd: work,
    env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, MCPRT_RUNTIME: missing, MCPRT_AGENT_DIR: join(work, "mcprt-agent") },
  });
  try {
    await pi.waitFor("the error notice", (e) => e.type === "extension_ui_request" && e.method === "notify" && String(e.message).includes(missing));
    pi.send({ id: "st", type: "get_state" });
    const i = await pi.waitFor("get_state's answer", (e) => e.type === "response" && e.id === "st");
    assert.equal(pi.events[i].success, true, JSON.stringify(pi.events[i]));
    pi.closeInput();
    assert.equal(await pi.exited, 0);
  } finally {
    pi.kill();
  }
});
