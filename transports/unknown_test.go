package transports

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

func isUnknown(m any) bool { _, ok := m.(messages.UnknownResponse); return ok }

// unknownCount counts the UnknownResponse reports a connection made.
func unknownCount(c *tconn) int {
	n := 0
	for _, m := range c.rec.all() {
		if isUnknown(m) {
			n++
		}
	}
	return n
}

const realAnswer = `{"content":[{"type":"text","text":"the real answer"}]}`

// TestUnknownResponseStdio (issue 13 item 8): on stdio, responses whose id
// the connection never sent (a foreign id, or our prefix with an operation
// number never issued) are ignored and counted; the request gets its own
// answer.
func TestUnknownResponseStdio(t *testing.T) {
	t.Parallel()
	forged := func(id string) string {
		return `'{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[{"type":"text","text":"forged"}]}}'`
	}
	after := `read -r note; read -r req; printf '%s\n' ` + forged("stranger-1") + " " + forged(idPrefix+"-999") +
		` '{"jsonrpc":"2.0","id":"` + idPrefix + `-1","result":` + realAnswer + `}'; cat >/dev/null`
	c, _ := dial(t, cannedServer("", after))
	id := c.send("tools/call", toolParams("echo", nil))
	if got := toolText(t, c.result(id)); got != "the real answer" {
		t.Fatalf("result = %q, want the real answer", got)
	}
	// The reader reported both before it read the real answer.
	if n := unknownCount(c); n != 2 {
		t.Errorf("%d unknown responses counted, want 2", n)
	}
}

// fakeHTTPServer is a Streamable HTTP server that answers the handshake and
// hands every tools/call to call(w, id).
func fakeHTTPServer(t *testing.T, call func(w http.ResponseWriter, id json.RawMessage)) string {
	return loopbackServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(b, &m)
		switch m.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`, m.ID)
		case "tools/call":
			call(w, m.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
}

// TestUnknownResponseHTTP (issue 13 item 8): over Streamable HTTP a
// response of another id on a request's SSE stream is ignored and counted
// (mcp-go alone took it as the result), and the real answer after it is
// the result; a single JSON answer of another id fails that request and is
// counted.
func TestUnknownResponseHTTP(t *testing.T) {
	t.Parallel()
	t.Run("sse", func(t *testing.T) {
		t.Parallel()
		url := fakeHTTPServer(t, func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"stranger-1\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"forged\"}]}}\n\n")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, realAnswer)
		})
		c, _ := dial(t, messages.Endpoint{URL: url + "/mcp"})
		if got := toolText(t, callTool(t, c, "echo", nil)); got != "the real answer" {
			t.Fatalf("result = %q, want the real answer", got)
		}
		if n := unknownCount(c); n != 1 {
			t.Errorf("%d unknown responses counted, want 1", n)
		}
	})
	t.Run("json", func(t *testing.T) {
		t.Parallel()
		url := fakeHTTPServer(t, func(w http.ResponseWriter, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"stranger-1","result":{"content":[{"type":"text","text":"forged"}]}}`)
		})
		c, _ := dial(t, messages.Endpoint{URL: url + "/mcp"})
		res := callTool(t, c, "echo", nil)
		wantErr(t, "foreign JSON answer", res.Err, messages.KindProtocol, "a request it was not sent")
		if res.Result != nil && strings.Contains(string(res.Result), "forged") {
			t.Errorf("the forged answer was taken: %s", res.Result)
		}
		if n := unknownCount(c); n != 1 {
			t.Errorf("%d unknown responses counted, want 1", n)
		}
	})
}
