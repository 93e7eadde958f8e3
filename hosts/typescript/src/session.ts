// A client of `runtime session`: spawns the sidecar, reads its hello,
// matches answers to requests by id and hands pushes to listeners.

import { spawn, type ChildProcess } from "node:child_process";
import {
  type Ask,
  type AskAnswer,
  PROTOCOL,
  PROTOCOL_VERSION,
  type Delivery,
  type SubscriptionEvent,
  type SubscriptionStatus,
  type Hello,
  type MethodName,
  type Methods,
  type Notice,
  type RequestId,
  type StatusSnapshot,
  type ToolDef,
  type ToolResult,
  type WireError,
} from "./protocol.js";
import { LineSplitter } from "./lines.js";

/** How to start the sidecar. */
export interface SessionOptions {
  /** The runtime binary; default `runtime` (found on PATH). */
  command?: string;
  /** Global flags put before `session`, e.g. `["--config", "mcp.json"]`. */
  args?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The sidecar's stderr (logs for people): inherit (default), ignore, or a callback per chunk. Unless inherited, its end is quoted when the sidecar exits before its hello. */
  stderr?: "inherit" | "ignore" | ((chunk: string) => void);
  /**
   * Answers servers' questions (elicitation, URL consent, sampling): the
   * sidecar runs with `--ask-host`. The signal aborts when the question is
   * withdrawn; a rejection answers the server with an error.
   */
  ask?: (q: Ask, signal: AbortSignal) => Promise<AskAnswer>;
}

/** A per-call option: cancel the request when the signal aborts. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** A failure the sidecar answered, or the session ending under a request. */
export class SidecarError extends Error {
  /** The stable code: an mcprt error kind (`server_not_found`, ...), a protocol code (`unknown_tool`, ...), or `session_closed` / `aborted` from this client. */
  readonly code: string;
  /** The request's id, when the error is about one. */
  readonly id?: RequestId;
  constructor(code: string, message: string, id?: RequestId) {
    super(message);
    this.name = "SidecarError";
    this.code = code;
    this.id = id;
  }
}

/** The pushes a session emits. */
export interface SessionEvents {
  /** An events wakeup: start a model turn with its text when `triggerTurn`. */
  deliver: (d: Delivery) => void;
  /** A message for the user. */
  notice: (n: Notice) => void;
  /** The status changed. */
  status: (s: StatusSnapshot) => void;
  /** The tool set changed: register these instead. */
  toolsChanged: (tools: ToolDef[]) => void;
  /** An event of a subscription the host made with `subscribe`. */
  event: (e: SubscriptionEvent) => void;
  /** A state change of such a subscription. */
  subscriptionStatus: (s: SubscriptionStatus) => void;
  /** An error line about no request in flight (an unreadable line, a late cancel). */
  protocolError: (e: SidecarError) => void;
  /** The sidecar process ended (exit code, or null with the signal). */
  exit: (code: number | null, signal: NodeJS.Signals | null) => void;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

type Listeners = { [K in keyof SessionEvents]: SessionEvents[K][] };

/** One running `runtime session`. Start it with {@link Session.start}. */
export class Session {
  /** The hello the sidecar opened with. */
  readonly hello: Hello;
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners: Listeners = {
    deliver: [], notice: [], status: [], toolsChanged: [], event: [], subscriptionStatus: [], protocolError: [], exit: [],
  };
  private nextId = 1;
  private currentTools: ToolDef[];
  private lastStatus?: StatusSnapshot;
  private exited: Promise<number | null>;
  private ended = false;

  private readonly asker?: (q: Ask, signal: AbortSignal) => Promise<AskAnswer>;
  private readonly asking = new Map<string, AbortController>();

  private constructor(child: ChildProcess, hello: Hello, exited: Promise<number | null>, asker?: (q: Ask, signal: AbortSignal) => Promise<AskAnswer>) {
    this.asker = asker;
    this.child = child;
    this.hello = hello;
    this.currentTools = hello.tools;
    this.exited = exited;
  }

  /** Spawns `command ...args session` and resolves once its hello is read. */
  static start(opts: SessionOptions = {}): Promise<Session> {
    const stderr = opts.stderr ?? "inherit";
    const command = opts.command ?? "runtime";
    const child = spawn(command, [...(opts.args ?? []), "session", ...(opts.ask ? ["--ask-host"] : [])], {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ["pipe", "pipe", stderr === "inherit" ? "inherit" : "pipe"],
    });
    // The end of stderr is kept to say why a sidecar exited before its
    // hello (a bad configuration, say).
    let stderrTail = "";
    if (child.stderr) {
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (chunk: string) => {
        stderrTail = (stderrTail + chunk).slice(-2048);
        if (typeof stderr === "function") stderr(chunk);
      });
    }
    // Writing to a sidecar that died is reported by its exit, not by an
    // unhandled EPIPE.
    child.stdin!.on("error", () => {});
    return new Promise((resolve, reject) => {
      let session: Session | undefined;
      const early: unknown[] = [];
      let exitResolve!: (c: number | null) => void;
      const exited = new Promise<number | null>((r) => (exitResolve = r));
      const splitter = new LineSplitter((line) => {
        let msg: unknown;
        try {
          msg = JSON.parse(line);
        } catch {
          return; // not ours to crash on; the protocol says every line is JSON
        }
        if (session) {
          session.dispatch(msg);
          return;
        }
        const hello = (msg as { hello?: Hello }).hello;
        if (!hello) {
          early.push(msg);
          return;
        }
        if (hello.protocol !== PROTOCOL || hello.version !== PROTOCOL_VERSION) {
          reject(new SidecarError("protocol_mismatch", `the sidecar speaks ${hello.protocol} ${hello.version}, not ${PROTOCOL} ${PROTOCOL_VERSION}`));
          child.kill();
          return;
        }
        session = new Session(child, hello, exited, opts.ask);
        for (const m of early) session.dispatch(m);
        resolve(session);
      });
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (chunk: string) => splitter.push(chunk));
      child.on("error", (err) => {
        if (!session) reject(new SidecarError("spawn_failed", `cannot start ${command}: ${err.message}`));
      });
      child.on("close", (code, signal) => {
        splitter.end();
        exitResolve(code);
        if (!session) {
          const why = stderrTail.trim();
          reject(new SidecarError("session_closed", `the sidecar exited before its hello (code ${code}, signal ${signal})${why ? ": " + why : ""}`));
          return;
        }
        session.onExit(code, signal);
      });
    });
  }

  /** The tools to register now: the hello's, or the latest `toolsChanged`. */
  get tools(): ToolDef[] {
    return this.currentTools;
  }

  /** The latest status pushed, if any. */
  get status(): StatusSnapshot | undefined {
    return this.lastStatus;
  }

  /** The sidecar's process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Adds a listener for a push. */
  on<K extends keyof SessionEvents>(event: K, fn: SessionEvents[K]): this {
    this.listeners[event].push(fn);
    return this;
  }

  /** Removes a listener. */
  off<K extends keyof SessionEvents>(event: K, fn: SessionEvents[K]): this {
    const l = this.listeners[event] as SessionEvents[K][];
    const i = l.indexOf(fn);
    if (i >= 0) l.splice(i, 1);
    return this;
  }

  /** Runs an agent-facing tool (`mcp`, `mcp_events`, a direct tool) exactly as a model would. A tool's failure is a result with `isError`, not a rejection. */
  callTool(tool: string, args: Record<string, unknown> = {}, opts: CallOptions = {}): Promise<ToolResult> {
    return this.request({ tool, args }, opts) as Promise<ToolResult>;
  }

  /** Calls a method of the typed API. A failure rejects with a {@link SidecarError} carrying the runtime's code. */
  call<M extends MethodName>(method: M, params?: Methods[M]["params"], opts: CallOptions = {}): Promise<Methods[M]["result"]> {
    return this.request(params === undefined ? { method } : { method, params }, opts) as Promise<Methods[M]["result"]>;
  }

  /** The configured servers' names, in configuration order. */
  servers(opts?: CallOptions): Promise<string[]> {
    return this.call("servers", undefined, opts);
  }

  /** Connects (with `fresh`, reconnects) a server and lists its catalog. */
  connect(server: string, fresh = false, opts?: CallOptions): Promise<Methods["connect"]["result"]> {
    return this.call("connect", { server, fresh }, opts);
  }

  /** The current status snapshot. */
  getStatus(opts?: CallOptions): Promise<StatusSnapshot> {
    return this.call("status", undefined, opts);
  }

  /** Writes one raw line (without its newline): for diagnostics and protocol tests. */
  sendRaw(line: string): void {
    this.write(line);
  }

  /**
   * Ends the session the protocol's way: closes stdin, lets the requests in
   * flight answer, and resolves with the exit code once the sidecar has
   * closed every server and exited.
   */
  close(): Promise<number | null> {
    if (!this.ended) this.child.stdin!.end();
    return this.exited;
  }

  /** Kills the sidecar (default SIGTERM: requests in flight are cancelled). Resolves with the exit code. */
  kill(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (!this.ended) this.child.kill(signal);
    return this.exited;
  }

  private request(body: Record<string, unknown>, opts: CallOptions): Promise<unknown> {
    if (this.ended) return Promise.reject(new SidecarError("session_closed", "the sidecar has exited"));
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(new SidecarError("aborted", "the request was aborted before it was sent"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => this.write(JSON.stringify({ id, cancel: true }));
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.pending.set(id, {
        resolve: (v) => { done(); resolve(v); },
        reject: (e) => { done(); reject(e); },
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.write(JSON.stringify({ id, ...body }));
    });
  }

  /** Puts a server's question to the ask option and writes its answer line. */
  private answerAsk(q: Ask): void {
    if (!this.asker) return;
    const ctl = new AbortController();
    this.asking.set(q.id, ctl);
    this.asker(q, ctl.signal).then(
      (result) => { if (this.asking.delete(q.id)) this.write(JSON.stringify({ answer: q.id, result })); },
      (err: unknown) => { if (this.asking.delete(q.id)) this.write(JSON.stringify({ answer: q.id, error: err instanceof Error ? err.message : String(err) })); },
    );
  }

  private write(line: string): void {
    if (this.ended || this.child.stdin!.writableEnded) return;
    this.child.stdin!.write(line + "\n");
  }

  private dispatch(msg: unknown): void {
    if (typeof msg !== "object" || msg === null) return;
    const m = msg as Record<string, unknown>;
    if ("ask" in m) return this.answerAsk(m.ask as Ask);
    if ("withdraw" in m) {
      this.asking.get(m.withdraw as string)?.abort();
      this.asking.delete(m.withdraw as string);
      return;
    }
    if ("deliver" in m) return this.emit("deliver", m.deliver as Delivery);
    if ("notice" in m) return this.emit("notice", m.notice as Notice);
    if ("event" in m) return this.emit("event", m.event as SubscriptionEvent);
    if ("subscriptionStatus" in m) return this.emit("subscriptionStatus", m.subscriptionStatus as SubscriptionStatus);
    if ("status" in m) {
      this.lastStatus = m.status as StatusSnapshot;
      return this.emit("status", this.lastStatus);
    }
    if ("toolsChanged" in m) {
      this.currentTools = m.toolsChanged as ToolDef[];
      return this.emit("toolsChanged", this.currentTools);
    }
    const p = typeof m.id === "number" ? this.pending.get(m.id) : undefined;
    if ("error" in m) {
      const e = m.error as WireError;
      const err = new SidecarError(e.code, e.message, m.id as RequestId | undefined);
      if (p) {
        this.pending.delete(m.id as number);
        p.reject(err);
      } else {
        this.emit("protocolError", err);
      }
      return;
    }
    if ("result" in m && p) {
      this.pending.delete(m.id as number);
      p.resolve(m.result);
    }
  }

  private emit<K extends keyof SessionEvents>(event: K, ...args: Parameters<SessionEvents[K]>): void {
    for (const fn of [...this.listeners[event]]) {
      (fn as (...a: Parameters<SessionEvents[K]>) => void)(...args);
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.ended = true;
    for (const [id, p] of this.pending) {
      p.reject(new SidecarError("session_closed", `the sidecar exited (code ${code}) before answering`, id));
    }
    this.pending.clear();
    this.emit("exit", code, signal);
  }
}
