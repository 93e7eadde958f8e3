import json, subprocess, sys, os
nm = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../.cache/npm/node_modules/")
servers = {
 "everything": [nm+"@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
 "filesystem": [nm+"@modelcontextprotocol/server-filesystem/dist/index.js", "/tmp"],
 "memory": [nm+"@modelcontextprotocol/server-memory/dist/index.js"],
 "sequential-thinking": [nm+"@modelcontextprotocol/server-sequential-thinking/dist/index.js"],
 "github": [nm+"@modelcontextprotocol/server-github/dist/index.js"],
 "playwright": [nm+"@playwright/mcp/cli.js"],
 "context7": [nm+"@upstash/context7-mcp/dist/index.js"],
}
out = sys.argv[1]
for name, args in servers.items():
    p = subprocess.Popen(["node"]+args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, MEMORY_FILE_PATH="/tmp/mem.json"))
    def send(o): p.stdin.write(json.dumps(o)+"\n"); p.stdin.flush()
    def recv(id):
        while True:
            line = p.stdout.readline()
            if not line: raise Exception(name+" eof")
            m = json.loads(line)
            if m.get("id") == id: return m
    send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"capture","version":"1"}}})
    init = recv(1)
    send({"jsonrpc":"2.0","method":"notifications/initialized"})
    tools=[]; cursor=None; i=2
    while True:
        params = {"cursor": cursor} if cursor else {}
        send({"jsonrpc":"2.0","id":i,"method":"tools/list","params":params})
        r = recv(i)["result"]; i+=1
        tools += r["tools"]; cursor = r.get("nextCursor")
        if not cursor: break
    p.stdin.close(); p.kill()
    si = init["result"].get("serverInfo",{})
    json.dump({"server": name, "serverInfo": si, "tools": tools}, open(f"{out}/{name}.json","w"), indent=1, sort_keys=True)
    print(name, si.get("name"), si.get("version"), len(tools), [t["name"] for t in tools])
