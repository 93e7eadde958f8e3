package transports

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// TestResponseBudget (issue 13 item 5): a response that would take the
// response bytes in flight over the Dialer's budget fails that call with
// resource_exhausted (as a JSON body and as an SSE event), the bytes it
// held are given back (a small call then works and the budget is back at
// zero), and a JSON body announced over 16 MiB is refused before reading.
func TestResponseBudget(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2<<20)
	url := fakeHTTPServer(t, func(w http.ResponseWriter, id json.RawMessage) {
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%%s"}]}}`, id)
		switch {
		case strings.Contains(string(id), "-2"): // JSON, 2 MiB
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, answer, big)
		case strings.Contains(string(id), "-3"): // SSE, 2 MiB
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: "+answer+"\n\n", big)
		case strings.Contains(string(id), "-4"): // announced over the limit
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(MaxFrame+1))
			w.WriteHeader(http.StatusOK)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, answer, "small")
		}
	})
	d := newDialer(t)
	d.ResponseBudget = 1 << 20
	c, _ := dialWith(t, d, messages.Endpoint{URL: url + "/mcp"})
	if got := toolText(t, c.result(c.send("tools/call", toolParams("x", nil)))); got != "small" {
		t.Fatalf("first call = %q", got)
	}
	for _, what := range []string{"JSON body", "SSE event"} {
		res := c.result(c.send("tools/call", toolParams("x", nil)))
		wantErr(t, what, res.Err, messages.KindResourceExhausted, "budget of 1 MiB", "MaxResponseBytesInFlight")
	}
	res := c.result(c.send("tools/call", toolParams("x", nil)))
	wantErr(t, "announced 16 MiB + 1", res.Err, messages.KindProtocol, "16 MiB")
	if got := toolText(t, c.result(c.send("tools/call", toolParams("x", nil)))); got != "small" {
		t.Fatalf("call after the refusals = %q", got)
	}
	if used := d.responseBudget().used.Load(); used != 0 {
		t.Errorf("%d bytes still held in the budget after every response ended", used)
	}
}
