package transports

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/messages"
)

// frameSeeds are realistic lines and hostile ones, for the fuzz targets'
// corpus.
var frameSeeds = []string{
	`{"jsonrpc":"2.0","method":"notifications/events/event","params":{"eventId":"evt-000000001","name":"bench.event","timestamp":"2026-01-01T00:00:00.000Z","cursor":"cur-000000001","data":{"path":"/tmp/demo/dir/file-000001.txt","op":"write","size":1234},"_meta":{"io.modelcontextprotocol/subscriptionId":"mcprt-ab-7"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/events/active","params":{"cursor":null,"_meta":{"io.modelcontextprotocol/subscriptionId":"mcprt-ab-7"}}}`,
	`{"jsonrpc":"2.0","id":"mcprt-ab-3","result":{"content":[{"type":"text","text":"ok"}],"isError":false}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found","data":{"x":[1,2]}}}`,
	`{"jsonrpc":"2.0","id":"tp-1","error":{"code":"abc","message":"boom"}}`,
	`{"jsonrpc":"2.0","id":"tp-2","error":{"code":1.5,"message":"half"}}`,
	`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"mcprt-ab-7","reason":"bye"}}`,
	`{"method":"a\u002fb","params":{"_meta":{"io.modelcontextprotocol\/subscriptionId":"x"}}}`,
	`{"method":"x","method":"y"}`, `{"Method":"x"}`, `{"method":5}`, `{"method":null,"id":null}`, `{"méthod":"x"}`,
	`{"params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"a","io.modelcontextprotocol/subscriptionId":"b"}}}`,
	`{"params":{"_meta":{"IO.modelcontextprotocol/subscriptionId":"a"}}}`, `{"params":{"_META":{}}}`,
	`{"params":{"_meta":"str"}}`, `{"params":{"_meta":null}}`, `{"params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`,
	`{"params":[1]}`, `{"params":null}`, `{"id":1}x`, `{"id":1,}`, "{\"method\":\"\xff\"}", `{"method":"\ud800"}`, `{}`, `{`,
	`{"params":` + strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}`,
}

// FuzzFrame holds decodeFrame's fast path to json.Unmarshal: whatever it
// is sure of, json.Unmarshal decodes to the same frame.
func FuzzFrame(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := scanFrame(line)
		want, err := unmarshalFrame(line)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("scanFrame sure of %q; json.Unmarshal: %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: scanFrame %+v, json.Unmarshal %+v", line, got, want)
		}
	})
}

// FuzzSubscriptionID holds the router's fast path to json.Unmarshal. The
// input is the params.
func FuzzSubscriptionID(f *testing.F) {
	for _, s := range frameSeeds {
		if fr, err := unmarshalFrame([]byte(s)); err == nil && fr.Params != nil {
			f.Add([]byte(fr.Params))
		}
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		got, ok := scanSubscriptionID(params)
		want := unmarshalSubscriptionID(params)
		if ok && ((got == nil) != (want == nil) || string(got) != string(want)) {
			t.Fatalf("%q: scanned %q, json.Unmarshal %q", params, got, want)
		}
	})
}

func TestScanFrameTakesTheCommonLines(t *testing.T) {
	for _, s := range frameSeeds[:8] {
		if _, ok := scanFrame([]byte(s)); !ok {
			t.Errorf("not sure of %s", s)
		}
	}
	f, _ := scanFrame([]byte(frameSeeds[0]))
	if _, ok := scanSubscriptionID(f.Params); !ok {
		t.Errorf("not sure of the event's params")
	}
	if id, ok := idString(subscriptionID(f.Params)); !ok || id != "mcprt-ab-7" {
		t.Errorf("subscription id %q, %v", id, ok)
	}
	// The members do not share room to grow: appending to one leaves the
	// others as they were.
	r, _ := scanFrame([]byte(`{"id":1,"result":{"a":1},"error":null}`))
	_ = append(r.Result, "XXXXXXXX"...)
	if string(r.Error) != "null" {
		t.Errorf("appending to the result changed the error to %q", r.Error)
	}
}

func TestRPCErrorOf(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want *mcp.JSONRPCErrorDetails
	}{
		{``, nil},
		{`null`, nil},
		{`{"code":-32601,"message":"nope","data":[1]}`, &mcp.JSONRPCErrorDetails{Code: -32601, Message: "nope", Data: []any{1.0}}},
		{`"bare"`, &mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: "bare"}},
		{`{"code":"abc","message":"boom","data":{"k":"v"}}`, &mcp.JSONRPCErrorDetails{Message: "boom", Data: map[string]any{"k": "v"}}},
		{`{"code":1.5,"message":"half"}`, &mcp.JSONRPCErrorDetails{Message: "half"}},
		{`{"code":7,"message":{"not":"a string"}}`, &mcp.JSONRPCErrorDetails{Code: 7}},
		{`{"message":"no code"}`, &mcp.JSONRPCErrorDetails{Message: "no code"}},
		{`42`, &mcp.JSONRPCErrorDetails{}},
	} {
		if got := rpcErrorOf(json.RawMessage(c.raw)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("rpcErrorOf(%s) = %+v, want %+v", c.raw, got, c.want)
		}
	}
}

// TestMalformedErrorCode: a response whose error code is not an integer
// fails only its request, as a JSON-RPC error without a code (0) that
// keeps the server's message; the stdio connection stays up and answers
// the next request.
func TestMalformedErrorCode(t *testing.T) {
	t.Parallel()
	answer := func(id, body string) string {
		return `*'"` + idPrefix + `-` + id + `"'*) printf '%s\n' '{"jsonrpc":"2.0","id":"` + idPrefix + `-` + id + `",` + body + `}';; `
	}
	script := `while read -r l; do case "$l" in ` +
		answer("1", `"error":{"code":"abc","message":"boom","data":{"why":"text code"}}`) +
		answer("2", `"error":{"code":1.5,"message":"half"}`) +
		answer("3", `"result":{"ok":true}`) + `esac; done`
	c, _ := dial(t, cannedServer("", script))
	for _, tc := range []struct {
		msg, data string
	}{{"boom", `{"why":"text code"}`}, {"half", ""}} {
		res := call(t, c, "bad/code", json.RawMessage(`{}`))
		wantErr(t, tc.msg, res.Err, messages.KindRPC, tc.msg+" (JSON-RPC error 0)")
		if res.Err.RPCCode != 0 || string(res.Err.RPCData) != tc.data || res.Err.Protocol() != nil {
			t.Errorf("%s: code %d, data %s, protocol error %+v", tc.msg, res.Err.RPCCode, res.Err.RPCData, res.Err.Protocol())
		}
	}
	if res := call(t, c, "good", json.RawMessage(`{}`)); res.Err != nil || string(res.Result) != `{"ok":true}` {
		t.Fatalf("after the malformed errors: %+v, %v", res.Result, res.Err)
	}
	for _, m := range c.rec.all() {
		if isConnClosed(m) {
			t.Fatalf("the connection closed: %+v", m)
		}
	}
}
