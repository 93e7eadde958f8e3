package transports

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// TestKilledMidLine (issue 13 item 9): a server killed by a signal while
// writing a line ends with its signal, not "wrote output that is not
// JSON-RPC" (the half line is how it ended, not a protocol violation).
func TestKilledMidLine(t *testing.T) {
	t.Parallel()
	ep := messages.Endpoint{Command: "/bin/sh", Args: []string{"-c", `read line; printf '{"jsonrpc":"2.0","id":"tp-h1","res'; kill -9 $$`}}
	e := dialErr(t, ep)
	wantErr(t, "killed mid-line", e, messages.KindInitFailed, "killed by signal 9", "in the middle of a message")
	if strings.Contains(e.Message, "JSON-RPC") {
		t.Errorf("error %q calls the cut-short line a protocol violation", e.Message)
	}
}

// TestSSEEventOverLimit (issue 13 item 9): over Streamable HTTP a response
// whose SSE event is over 16 MiB fails that request with "message over the
// 16 MiB limit" (mcp-go alone says "unexpected nil response"), and the
// connection stays usable.
func TestSSEEventOverLimit(t *testing.T) {
	t.Parallel()
	c, _ := dial(t, httpEP(t, "--http 127.0.0.1:0"))
	params, _ := json.Marshal(map[string]any{"name": "big", "arguments": map[string]any{"bytes": overSize},
		"_meta": map[string]any{"progressToken": "p1"}})
	res := call(t, c, "tools/call", params)
	wantErr(t, "17 MiB SSE event", res.Err, messages.KindProtocol, "message over the 16 MiB limit")
	if strings.Contains(res.Err.Message, "nil response") {
		t.Errorf("library text reached the user: %q", res.Err.Message)
	}
	echo(t, c, "still connected")
}
