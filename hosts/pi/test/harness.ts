// Test harness: the runtime binary built from this repository, and a real
// Pi in RPC mode driven over its JSON lines.

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { LineSplitter } from "@mcprt/sidecar";

const here = dirname(fileURLToPath(import.meta.url));
/** hosts/pi (this file is hosts/pi/dist/test/). */
export const piPackage = resolve(here, "../..");
/** The repository's root. */
export const repoRoot = resolve(piPackage, "../..");
/** The extension's entry, loaded by Pi from source (Pi compiles TypeScript itself). */
export const extensionEntry = join(piPackage, "src/index.ts");
/** Pi's command line entry, from the pinned package. */
export const piCli = join(piPackage, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js");

/** A fresh temporary directory. */
export function tempDir(prefix = "mcprt-pi-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The runtime binary: $MCPRT_TEST_RUNTIME, else go build ./cmd/runtime into a temporary directory. */
export function runtimeBinary(): string {
  if (process.env.MCPRT_TEST_RUNTIME) return process.env.MCPRT_TEST_RUNTIME;
  const out = join(tempDir("mcprt-bin-"), "runtime");
  execFileSync("go", ["build", "-o", out, "./cmd/runtime"], { cwd: repoRoot, stdio: "inherit" });
  return out;
}

/** The pids of running processes whose command line mentions s (Linux /proc). */
export function processesMentioning(s: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // A zombie is dead already; its parent has yet to reap it.
      if (cmd.includes(s) && !/\) Z /.test(stat)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** One line of Pi's RPC output. */
export type RpcEvent = { type: string; [k: string]: unknown };

/** A real Pi in RPC mode. */
export class PiRpc {
  readonly events: RpcEvent[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private waiters: { from: number; want: (e: RpcEvent) => boolean; resolve: (i: number) => void }[] = [];

  constructor(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }) {
    this.child = spawn(process.execPath, [piCli, "--mode", "rpc", ...args], { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"] });
    const lines = new LineSplitter((line) => {
      let e: RpcEvent;
      try {
        e = JSON.parse(line) as RpcEvent;
      } catch {
        this.stderr.push(`(stdout, not JSON) ${line}\n`);
        return;
      }
      this.events.push(e);
      const i = this.events.length - 1;
      for (const w of [...this.waiters]) {
        if (i >= w.from && w.want(e)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(i);
        }
      }
    });
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (c: string) => lines.push(c));
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (c: string) => this.stderr.push(c));
    this.exited = new Promise((r) => this.child.on("close", (code) => r(code)));
  }

  /** Sends one RPC command. */
  send(cmd: Record<string, unknown>): void {
    this.child.stdin!.write(JSON.stringify(cmd) + "\n");
  }

  /** Resolves with the index of the first event at or after `from` that satisfies want; rejects after ms (a hang guard) with Pi's stderr. */
  waitFor(what: string, want: (e: RpcEvent) => boolean, from = 0, ms = 60_000): Promise<number> {
    for (let i = from; i < this.events.length; i++) if (want(this.events[i])) return Promise.resolve(i);
    return new Promise((resolve, reject) => {
      const guard = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`waited in vain for ${what}; events: ${this.events.map((e) => e.type).join(" ")}; stderr: ${this.stderr.join("").slice(-2000)}`));
      }, ms);
      const done = (i: number) => {
        clearTimeout(guard);
        resolve(i);
      };
      this.waiters.push({ from, want, resolve: done });
    });
  }

  /** Ends Pi the RPC way: closes its stdin. */
  closeInput(): void {
    this.child.stdin!.end();
  }

  kill(): void {
    this.child.kill("SIGKILL");
  }
}
