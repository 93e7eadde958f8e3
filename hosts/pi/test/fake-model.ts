// A scripted OpenAI-compatible chat completions server on 127.0.0.1 for
// tests: a script decides each answer from the request's messages, and
// every request is recorded.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One chat message as Pi sends it. */
export interface ChatMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** A tool call the script makes. */
export interface ScriptedCall {
  name: string;
  args: Record<string, unknown>;
}

/** What the model answers: text, or tool calls. */
export type Answer = { text: string } | { calls: ScriptedCall[] };

/** A recorded request. */
export interface Recorded {
  messages: ChatMessage[];
  tools: string[];
}

/** The text of a message's content. */
export function textOf(m: ChatMessage | undefined): string {
  if (!m || m.content == null) return "";
  if (typeof m.content === "string") return m.content;
  return m.content.map((p) => p.text ?? "").join("");
}

/** The fake model server. */
export class FakeModel {
  readonly requests: Recorded[] = [];
  private server?: Server;
  private waiters: { n: number; resolve: () => void }[] = [];
  private callSeq = 0;

  constructor(private readonly script: (messages: ChatMessage[]) => Answer) {}

  /** Listens on 127.0.0.1 and resolves with the base URL (…/v1). */
  async listen(): Promise<string> {
    this.server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (body += c));
      req.on("end", () => {
        if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
          res.writeHead(404).end();
          return;
        }
        const parsed = JSON.parse(body) as { messages: ChatMessage[]; tools?: { function: { name: string } }[] };
        this.requests.push({ messages: parsed.messages, tools: (parsed.tools ?? []).map((t) => t.function.name) });
        let answer: Answer;
        try {
          answer = this.script(parsed.messages);
        } catch (e) {
          answer = { text: `script error: ${String(e)}` };
        }
        this.stream(res, answer);
        for (const w of this.waiters.filter((w) => this.requests.length >= w.n)) w.resolve();
        this.waiters = this.waiters.filter((w) => this.requests.length < w.n);
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  /** Resolves once n requests have been received. */
  waitForRequests(n: number): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  close(): Promise<void> {
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private stream(res: import("node:http").ServerResponse, answer: Answer): void {
    const id = `chatcmpl-${this.requests.length}`;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (chunk: object) =>
      res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: "scripted", ...chunk })}\n\n`);
    if ("text" in answer) {
      send({ choices: [{ index: 0, delta: { role: "assistant", content: answer.text }, finish_reason: null }] });
      send({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
    } else {
      send({
        choices: [{
          index: 0,
          delta: {
            role: "assistant",
            tool_calls: answer.calls.map((c, i) => ({
              index: i, id: `call_${++this.callSeq}`, type: "function",
              function: { name: c.name, arguments: JSON.stringify(c.args) },
            })),
          },
          finish_reason: null,
        }],
      });
      send({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
    }
    send({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    res.end("data: [DONE]\n\n");
  }
}
