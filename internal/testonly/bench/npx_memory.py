#!/usr/bin/env python3
"""Memory and start-up time of a stdio MCP server run through npx versus run
the way mcprt runs it when the package is in npm's npx cache (node and the
package's bin, no npm parent). Run from the repository root after the package
is in the npx cache (one `npx -y PKG@VERSION` run puts it there):

    python3 internal/bench/npx_memory.py [@modelcontextprotocol/server-everything@2026.8.31] [rounds]

For each way it spawns the server in its own process group, sends initialize
and tools/list, and once tools/list has answered sums the resident memory of
every process of the group (ps -g), which /usr/bin/time -v would miss: it
reports only the largest single process. Prints the medians."""
import glob, json, os, statistics, subprocess, sys, time

spec = sys.argv[1] if len(sys.argv) > 1 else "@modelcontextprotocol/server-everything@2026.8.31"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
name, version = spec.rsplit("@", 1)
cache = os.environ.get("npm_config_cache", os.path.expanduser("~/.npm"))
manifest = None
for m in sorted(glob.glob(os.path.join(cache, "_npx", "*", "node_modules", name, "package.json"))):
    if json.load(open(m)).get("version") == version:
        manifest = m
        break
if manifest is None:
    sys.exit(f"{spec} is not in the npx cache ({cache}); run npx -y {spec} once")
pkg = json.load(open(manifest))
bins = pkg["bin"] if isinstance(pkg["bin"], dict) else {name: pkg["bin"]}
binpath = os.path.join(os.path.dirname(manifest), list(bins.values())[0])
ways = {"npx": ["npx", "-y", spec, "stdio"], "resolved": ["node", binpath, "stdio"]}

def once(argv):
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    def send(o): p.stdin.write(json.dumps(o) + "\n"); p.stdin.flush()
    def recv(i):
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == i: return m
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    recv(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    recv(2)
    elapsed = time.monotonic() - t0
    out = subprocess.run(["ps", "-o", "rss=,comm=", "-g", str(p.pid)], capture_output=True, text=True).stdout.split("\n")
    rows = [l.split(None, 1) for l in out if l.strip()]
    rss = sum(int(r[0]) for r in rows) / 1024
    os.killpg(p.pid, 9); p.wait()
    return elapsed, rss, len(rows)

results = {}
for way, argv in ways.items():
    runs = [once(argv) for _ in range(rounds)]
    results[way] = (statistics.median(r[0] for r in runs) * 1000, statistics.median(r[1] for r in runs), runs[0][2])
    print(f"{way:9s} start→tools/list {results[way][0]:6.0f} ms   memory {results[way][1]:6.1f} MiB over {results[way][2]} processes   ({' '.join(argv[:2])} …)")
print(f"saved per server: {results['npx'][1] - results['resolved'][1]:.1f} MiB, {results['npx'][0] - results['resolved'][0]:.0f} ms")
