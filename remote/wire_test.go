package remote

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"
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
		f, err := appendFrame(nil, "session-1", m)
		if err != nil {
			t.Fatal(err)
		}
		id, body, err := readFrame(bufio.NewReader(bytes.NewReader(f)))
		if err != nil || id != "session-1" || !bytes.Equal(body, v.GetValue()) {
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
