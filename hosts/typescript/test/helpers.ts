// Test helpers: the real runtime binary, built from this repository.

import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository's root (this file is hosts/typescript/dist/test/). */
export const repoRoot = resolve(here, "../../../..");

let built: string | undefined;

/**
 * The runtime binary: $MCPRT_TEST_RUNTIME when set, else `go build ./cmd/runtime`
 * into a fresh temporary directory (once per test process).
 */
export function runtimeBinary(): string {
  if (process.env.MCPRT_TEST_RUNTIME) return process.env.MCPRT_TEST_RUNTIME;
  if (!built) {
    const dir = mkdtempSync(join(tmpdir(), "mcprt-ts-"));
    built = join(dir, "runtime");
    execFileSync("go", ["build", "-o", built, "./cmd/runtime"], { cwd: repoRoot, stdio: "inherit" });
  }
  return built;
}

/** A fresh temporary directory. */
export function tempDir(prefix = "mcprt-ts-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes an mcprt configuration file with these servers and returns its path. */
export function writeConfig(dir: string, servers: Record<string, unknown>): string {
  const path = join(dir, "mcp.json");
  writeFileSync(path, JSON.stringify({ mcpServers: servers }, null, 2));
  return path;
}

/** Resolves with the first value `subscribe` hands its callback that satisfies `want`; a hang guard rejects after `ms`. */
export function waitFor<T>(what: string, subscribe: (cb: (v: T) => void) => () => void, want: (v: T) => boolean, ms = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      stop();
      reject(new Error(`waited in vain for ${what}`));
    }, ms);
    const stop = subscribe((v) => {
      if (want(v)) {
        clearTimeout(guard);
        stop();
        resolve(v);
      }
    });
  });
}
