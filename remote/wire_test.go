package remote

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// Every wire message survives encode and decode; the hand-written
// envelope and reply are JSON a generic decoder reads the same way; and
// envelopes spelled otherwise (or broken) are decoded or refused, never
// guessed at.
func TestWireRoundTrip(t *testing.T) {
	for _, m := range []any{
		&attachMsg{Client: pidRef{Address: "a:1", ID: "x"}, Nonce: "n"},
		&requestMsg{ID: 7, Op: opTool, Name: "mcp", Args: json.RawMessage(`{"a":1}`)},
		&replyMsg{ID: 7, Result: json.RawMessage(`{"text":"hi \"there\"","details":{"k":[1,2]}}`)},
		&replyMsg{ID: 8, Err: &wireErr{Code: "aborted", Message: "m"}},
		&cancelMsg{ID: 9},
		heartbeatMsg{},
		detachMsg{},
		&askMsg{ID: 3, Kind: askRoots, Server: "s", Body: json.RawMessage(`{}`)},
		&answerMsg{ID: 3, Body: json.RawMessage(`[{"uri":"file:///x"}]`)},
		// Lengths whose varint takes 2 and 3 bytes.
		&replyMsg{ID: 10, Result: json.RawMessage(`"` + strings.Repeat("x", 300) + `"`)},
		&replyMsg{ID: 11, Result: json.RawMessage(`"` + strings.Repeat("y", 70000) + `"`)},
	} {
		v, err := encode(m)
		if err != nil {
			t.Fatal(err)
		}
		// A link's frame carries the same envelope to the same actor.
		f, _, err := appendFrame(nil, "session-1", m)
		if err != nil {
			t.Fatal(err)
		}
		id, body, err := readFrame(bufio.NewReader(bytes.NewReader(f)))
		if err != nil || string(id) != "session-1" || !bytes.Equal(body, v.GetValue()) {
			t.Fatalf("%T: frame %q: %q, %q, %v", m, f, id, body, err)
		}
		var env envelope
		if err := json.Unmarshal(v.GetValue(), &env); err != nil {
			t.Fatalf("%T: the envelope is not JSON: %s", m, v.GetValue())
		}
		got, err := decode(v)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%T: decoded %#v, want %#v", m, got, m)
		}
	}
	for _, c := range []struct {
		raw string
		ok  bool
	}{
		{`{"b":{"id":4},"k":"cancel"}`, true}, // another spelling: decoded whole
		{`{"k":"cancel","b":{"id":4}, "x":1}`, false},
		{`{"k":"nope"}`, false},
		{`{"k":"reply","b":{"id":4,"result":{"text":"x"}}}`, true},
		{`not json`, false},
		{`{"k":"cancel","b":{"id":"four"}}`, false},
	} {
		_, err := decode(wrapperspb.Bytes([]byte(c.raw)))
		if (err == nil) != c.ok {
			t.Errorf("decode %s: %v, want ok=%v", c.raw, err, c.ok)
		}
	}
}

// A request written by hand is what json.Marshal would write but for
// escaping, and a request read by jsonscan is what json.Unmarshal reads;
// whatever either is not sure of goes the general way, with the same
// outcome.
func TestRequestFastPath(t *testing.T) {
	for _, r := range []*requestMsg{
		{ID: 1, Op: opTool, Name: "mcp", Args: json.RawMessage(`{"server":"ts","tool":"echo","args":{"message":"<b>&"}}`)},
		{ID: 2, Op: opServers},
		{ID: 3, Op: opTool, Name: "quote\"d", Args: json.RawMessage(`{}`)},
		{ID: 4, Op: opTool, Name: "é", Args: json.RawMessage(`{ "spaced": true }`)},
		{ID: 5, Op: opTool, Name: "x", Args: json.RawMessage(`[1,2]`)},
	} {
		v, err := encode(r)
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			B requestMsg `json:"b"`
		}
		if err := json.Unmarshal(v.GetValue(), &env); err != nil {
			t.Fatalf("%s: %v", v.GetValue(), err)
		}
		want, _ := json.Marshal(r)
		got, _ := json.Marshal(&env.B)
		if !bytes.Equal(got, want) {
			t.Errorf("written %s, reads as %s; want %s", v.GetValue(), got, want)
		}
	}
	for i, body := range []string{
		`{"id":7,"op":"tool","name":"mcp","args":{"server":"ts"}}`,
		`{"op":"servers","id":8}`,
		` {"id":9,"op":"tool","name":"a\u00e9\"b","args":[1, 2]} `,
		`{"id":10,"op":"tool","args":null}`,
		`{"id":11,"ID":12,"op":"tool"}`,
		`{"id":1e3,"op":"tool"}`,
		`{"id":-1,"op":"tool"}`,
		`{"id":13,"op":null}`,
		`{"id":14,"op":"tool","op":"tools"}`,
		`{"id":15,"op":"tool","extra":{"deep":[{}]}}`,
		`{"id":16,"op":"tool",}`,
		`{"id":18446744073709551616,"op":"tool"}`,
	} {
		var want requestMsg
		werr := json.Unmarshal([]byte(body), &want)
		got, ok := splitRequest([]byte(body))
		if i < 3 && !ok {
			t.Errorf("splitRequest %s: not sure; want it read", body)
		}
		if ok && (werr != nil || !reflect.DeepEqual(*got, want)) {
			t.Errorf("splitRequest %s = %+v; json.Unmarshal gives %+v, %v", body, *got, want, werr)
		}
		v, err := decode(wrapperspb.Bytes([]byte(`{"k":"request","b":` + body + `}`)))
		if (err == nil) != (werr == nil) || (err == nil && !reflect.DeepEqual(v, &want)) {
			t.Errorf("decode %s = %+v, %v; want %+v, %v", body, v, err, want, werr)
		}
	}
	for _, args := range []string{`{"server":"ts"}`, `{"tool":"x"}`, `{"server":"a\"b"}`, `{"server":null}`, `{"server":1}`, `{"Server":"x"}`, `[]`, `nope`} {
		var a struct {
			Server string `json:"server"`
		}
		_ = json.Unmarshal([]byte(args), &a)
		got, ok := argsServer([]byte(args))
		if ok && got != a.Server {
			t.Errorf("argsServer %s = %q; want %q", args, got, a.Server)
		}
		if args == `{"server":"ts"}` && !ok {
			t.Errorf("argsServer %s: not sure; want it read", args)
		}
		m := &requestMsg{Op: opTool, Args: json.RawMessage(args)}
		if got, _ := requestServer(m); got != a.Server {
			t.Errorf("requestServer %s = %q; want %q", args, got, a.Server)
		}
	}
}

// A tool result read without reflection is what encoding/json reads (with
// details' "result" kept raw), or is left to it.
func TestResultFastPath(t *testing.T) {
	for i, raw := range []string{
		`{"text":"echo: benchmark","details":{"result":{"content":[{"type":"text","text":"echo: benchmark"}]},"server":"ts","tool":"echo"}}`,
		`{"text":"x","isError":true,"details":{"error":"aborted","n":-1.5e3,"z":0,"ok":false,"nil":null,"e":[],"o":{}}}`,
		` { "text" : "a\"b\u00e9\ud83d\ude00" , "details" : { "k" : [ 1 , "two" , [ ] , { "x" : null } ] , "k" : "last" } } `,
		`{"text":"ünïcode","details":{"ключ":"значение","esc\\aped":"\t"}}`,
		`{"text":"t"}`,
		`{"text":"r","details":{"result":"a \"}] string","x":1}}`,
		`{"details":{"result":-12.5e3 , "y":[{"result":{"z":1}}]}}`,
		`{"details":{"a":"b","result":{"s":"}\\\"]","l":[[],{}],"n":null} }}`,
		`{"details":{"result":null,"k":true}}`,
		`{"details":{"big":1e400}}`,
		`{"details":null}`,
		`{"details":[1]}`,
		`{"isError":null}`,
		`{"images":[{"mimeType":"image/png","data":"AA=="}]}`,
		`{"Text":"case"}`,
		`{"text":"t","text":"u"}`,
		`{"text":"bad utf8 ` + "\xff" + `"}`,
		`{"text":1}`,
		`{"text":"x",}`,
	} {
		want, werr := unmarshalResult([]byte(raw))
		got, ok := decodeResult([]byte(raw))
		if i < 9 && !ok {
			t.Errorf("decodeResult %s: not sure; want it read", raw)
		}
		if ok && (werr != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("decodeResult %s = %#v; encoding/json gives %#v, %v", raw, got, want, werr)
		}
	}
}

// A result written by hand reads back as json.Marshal's spelling of it.
func TestResultWrittenByHand(t *testing.T) {
	var withImage mcprt.Result
	_ = json.Unmarshal([]byte(`{"text":"img","images":[{}]}`), &withImage)
	for i, r := range []mcprt.Result{
		{Text: "echo: benchmark", Details: map[string]any{"result": json.RawMessage(`{"content":[{"type":"text","text":"echo: benchmark"}]}`), "server": "ts", "tool": "echo"}},
		{Text: "Error: <x> & \"q\" \\ \n\t\r\x01 é \xff \u2028", IsError: true, Details: map[string]any{"error": "aborted", "n": 3, "f": 1.5e-7, "big": 1e21, "ok": true, "nil": nil,
			"list": []any{1.0, "two", []any{}, map[string]any{}}, "nested": map[string]any{"m": map[string]any(nil), "l": []any(nil), "r": json.RawMessage(nil)}}},
		{Text: ""},
		{Text: "raw spaced", Details: map[string]any{"result": json.RawMessage(`{ "a": 1 }`)}},
		{Text: "nan", Details: map[string]any{"x": math.NaN()}},
		{Text: "other type", Details: map[string]any{"x": int64(1)}},
		withImage,
	} {
		b, ok := appendResult(nil, r)
		if i < 3 && !ok {
			t.Errorf("%d: not written by hand", i)
		}
		if !ok {
			continue
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var got, exp mcprt.Result
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%d: %s: %v", i, b, err)
		}
		_ = json.Unmarshal(want, &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%d: %s reads as %#v; json.Marshal's %s as %#v", i, b, got, want, exp)
		}
	}
}

// An attached session's tool result is the embedded runtime's, value for
// value: details' "result" is the server's raw JSON (json.RawMessage) on
// both, whether the session read it by hand or by encoding/json.
func TestAttachedResultIsEmbeddedResult(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{})
	s, err := Attach(testkit.Ctx(t), r.srv.Addr(), AttachOptions{TokenFile: r.srv.TokenFile()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	attached, _ := s.Tool(mcprt.MCPToolName)
	embedded, _ := r.rt.Tool(mcprt.MCPToolName)
	for _, args := range []string{
		`{"server":"ts","tool":"echo","args":{"message":"a \"}] string"}}`,
		`{"server":"ts","tool":"nosuchtool","args":{}}`,
	} {
		want := embedded.Execute(testkit.Ctx(t), json.RawMessage(args))
		got := attached.Execute(testkit.Ctx(t), json.RawMessage(args))
		if _, ok := want.Details["result"]; !ok && !want.IsError {
			t.Fatalf("%s: the embedded result has no raw result: %#v", args, want)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: attached %#v; embedded %#v", args, got, want)
		}
		b, _ := json.Marshal(want)
		if slow, err := unmarshalResult(b); err != nil || !reflect.DeepEqual(slow, want) {
			t.Errorf("%s: by encoding/json %#v, %v; embedded %#v", args, slow, err, want)
		}
	}
}
