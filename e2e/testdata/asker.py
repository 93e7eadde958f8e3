#!/usr/bin/env python3
"""A stdio MCP server that asks the client things, for the client-side tests.

Its one tool, probe, runs a scenario that sends the client server-to-client
requests (well-formed, malformed, unknown, many at once) and returns what came
back, as text: "code=<n> message=<m>" for an error, "result=<json>" for a
result, or counts for the flood.
"""
import json
import sys

pending = []  # messages read while waiting for something else
level = ["unset"]  # the level logging/setLevel set


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def read():
    if pending:
        return pending.pop(0)
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def wait_for(ids):
    """Reads until a response for each id has arrived; returns them by id."""
    got, keep = {}, []
    while len(got) < len(ids):
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        msg = json.loads(line)
        if "method" not in msg and msg.get("id") in ids:
            got[msg["id"]] = msg
        else:
            keep.append(msg)
    pending.extend(keep)
    return got


def outcome(resp):
    if "error" in resp:
        return "code=%d message=%s" % (resp["error"]["code"], resp["error"]["message"])
    return "result=" + json.dumps(resp["result"], sort_keys=True)


FORM = {"type": "object", "properties": {"color": {"type": "string", "default": "blue"}}}


def scenario(name):
    if name == "unknown":
        send({"jsonrpc": "2.0", "id": "u1", "method": "foo/bar", "params": {}})
        return outcome(wait_for(["u1"])["u1"])
    if name == "ping":
        send({"jsonrpc": "2.0", "id": 0, "method": "ping"})
        return outcome(wait_for([0])[0])
    if name == "nested":
        send({"jsonrpc": "2.0", "id": "n1", "method": "elicitation/create", "params": {
            "message": "x", "requestedSchema": {"type": "object", "properties": {"address": {"type": "object"}}}}})
        return outcome(wait_for(["n1"])["n1"])
    if name == "badurl":
        send({"jsonrpc": "2.0", "id": "b1", "method": "elicitation/create", "params": {
            "mode": "url", "message": "x", "url": "javascript:alert(1)", "elicitationId": "e1"}})
        return outcome(wait_for(["b1"])["b1"])
    if name == "sampling":
        send({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}})
        return outcome(wait_for(["s1"])["s1"])
    if name == "flood":
        ids = ["f%d" % i for i in range(40)]
        for i in ids:
            send({"jsonrpc": "2.0", "id": i, "method": "elicitation/create", "params": {"message": "q", "requestedSchema": FORM}})
        # The answers that come now are the refusals; the rest wait for the host.
        refused = []
        while len(refused) < 40 - 16:
            msg = read()
            if "method" not in msg and msg.get("id") in ids:
                refused.append(msg)
        too_many = sum(1 for m in refused if m.get("error", {}).get("message") == "too many pending requests")
        waiting = [i for i in ids if i not in [m["id"] for m in refused]]
        for i in waiting:
            send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i, "reason": "done"}})
        return "refused=%d too_many=%d withdrawn=%d" % (len(refused), too_many, len(waiting))
    if name == "level":
        return "level=" + level[0]
    if name == "log":
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {
            "level": "warning", "logger": "asker", "data": {"msg": "disk almost full"}}})
        return "logged"
    return "unknown scenario"


def main():
    while True:
        msg = read()
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "asker", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{
                "name": "probe", "description": "Runs a scenario of server-to-client requests.",
                "inputSchema": {"type": "object", "properties": {"scenario": {"type": "string"}}, "required": ["scenario"]}}]}})
        elif method == "tools/call":
            text = scenario(msg["params"]["arguments"]["scenario"])
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
        elif method == "logging/setLevel":
            level[0] = msg["params"]["level"]
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        elif mid is not None and method is not None:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found"}})


main()
