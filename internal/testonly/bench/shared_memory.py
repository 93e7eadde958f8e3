#!/usr/bin/env python3
"""Processes and resident memory of N agent sessions using 5 stdio servers,
each session with its own runtime (`runtime session`) versus all attached to
one shared runtime (`runtime serve` + `runtime --attach ADDR session`).
The servers are the built-in demo server (`runtime demo-server`, a Go
process), started eagerly. Run from the repository root:

    python3 internal/testonly/bench/shared_memory.py [sessions]

Once every session reports 5 connected servers, it counts every process
descended from a session (and from the member) and sums their resident
memory (VmRSS from /proc)."""
import json, os, shutil, signal, subprocess, sys, tempfile, time

sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 10
work = tempfile.mkdtemp(prefix="mcprt-shared-mem-")
binary = os.path.join(work, "runtime")
subprocess.run(["go", "build", "-o", binary, "./cmd/runtime"], check=True)
servers = {f"demo{i}": {"command": binary, "args": ["demo-server"], "lifecycle": "eager"} for i in range(5)}
cfg = os.path.join(work, "mcp.json")
json.dump({"mcpServers": servers}, open(cfg, "w"))
env = dict(os.environ, HOME=os.path.join(work, "home"), MCPRT_AGENT_DIR=os.path.join(work, "agent"))
procs = []

def start(argv, **kw):
    p = subprocess.Popen(argv, env=env, cwd=work, start_new_session=True, **kw)
    procs.append(p)
    return p

def sidecar(argv):
    p = start(argv + ["session"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdout.readline()  # hello
    return p

def connected(p):
    # Ask the status until all 5 servers are connected.
    for i in range(600):
        p.stdin.write(json.dumps({"id": i, "method": "status"}) + "\n"); p.stdin.flush()
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == i: break
        if m["result"]["connectedCount"] == 5: return
        time.sleep(0.05)
    sys.exit("servers did not connect")

def measure():
    # Every process descended from a session or the member (a stdio
    # server runs in a process group of its own).
    parent, rss = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit(): continue
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("PPid:"): parent[int(pid)] = int(line.split()[1])
                if line.startswith("VmRSS:"): rss[int(pid)] = int(line.split()[1])
        except (ProcessLookupError, FileNotFoundError):
            pass
    roots = {p.pid for p in procs}
    def ours(pid):
        while pid > 1:
            if pid in roots: return True
            pid = parent.get(pid, 0)
        return False
    mine = [pid for pid in parent if ours(pid)]
    return len(mine), sum(rss.get(pid, 0) for pid in mine) / 1024

def stop():
    for p in procs:
        try: os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError: pass
    for p in procs: p.wait()
    procs.clear()

try:
    for _ in range(sessions):
        connected(sidecar([binary, "--config", cfg]))
    sep = measure(); stop()
    member = start([binary, "--config", cfg, "serve"], stderr=subprocess.PIPE, text=True)
    addr = member.stderr.readline().split("listening on ")[1].split()[0]
    for _ in range(sessions):
        connected(sidecar([binary, "--attach", addr]))
    shr = measure(); stop()
    print(f"{sessions} sessions x 5 stdio servers")
    print(f"separate: {sep[0]} processes, {sep[1]:.0f} MiB resident")
    print(f"shared:   {shr[0]} processes, {shr[1]:.0f} MiB resident")
finally:
    stop(); shutil.rmtree(work, ignore_errors=True)
