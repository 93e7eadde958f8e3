#!/usr/bin/env python3
"""A minimal agent host in Python driving mcprt's sidecar (docs/sidecar.md).

Standard library only. It starts `runtime session`, reads the hello (the
tools to register with a model), calls a tool the way a model would, prints
what comes back, and ends the session by closing stdin, which reaps every
server the runtime started.

    python3 docs/examples/sidecar_host.py RUNTIME [RUNTIME-FLAGS...] -- TOOL JSON-ARGS

for example

    python3 docs/examples/sidecar_host.py runtime --stdio "runtime demo-server" -- echo '{"message": "hi"}'
"""
import json
import subprocess
import sys
import threading


class Sidecar:
    """One `runtime session` process and the requests in flight on it."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv + ["session"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.next_id = 0
        self.waiting = {}  # id -> [threading.Event, answer]
        self.lock = threading.Lock()
        hello = json.loads(self.proc.stdout.readline())["hello"]
        self.tools = {t["name"]: t for t in hello["tools"]}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            if "id" in msg:
                with self.lock:
                    slot = self.waiting.pop(json.dumps(msg["id"]), None)
                if slot:
                    slot[1] = msg
                    slot[0].set()
            elif "deliver" in msg:
                # An events wakeup: a real host starts a model turn with it
                # when triggerTurn is true.
                print("wakeup:", msg["deliver"]["text"], file=sys.stderr)
            elif "notice" in msg:
                print("notice:", msg["notice"]["text"], file=sys.stderr)
            # "status" and "toolsChanged" lines would update the host's UI
            # and its tool registrations.

    def request(self, **fields):
        with self.lock:
            self.next_id += 1
            rid = self.next_id
            slot = self.waiting[json.dumps(rid)] = [threading.Event(), None]
        self.proc.stdin.write(json.dumps(dict(id=rid, **fields)) + "\n")
        self.proc.stdin.flush()
        slot[0].wait()
        return slot[1]

    def close(self):
        self.proc.stdin.close()  # ends the session once calls have answered
        self.reader.join()
        return self.proc.wait()


def main():
    argv = sys.argv[1:]
    split = argv.index("--")
    runtime, (tool, args) = argv[:split], argv[split + 1:]
    sc = Sidecar(runtime)
    print("tools:", ", ".join(sorted(sc.tools)))
    answer = sc.request(tool="mcp", args={"tool": tool, "args": json.loads(args)})
    if "error" in answer:
        print("error:", answer["error"]["message"])
    else:
        print("result:", answer["result"]["text"])
    sys.exit(sc.close())


if __name__ == "__main__":
    main()
