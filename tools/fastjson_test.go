package tools

import (
	"encoding/json"
	"github.com/mcprt/mcprt/internal/jsonscan"
	"reflect"
	"testing"
)

var argSeeds = []string{
	`{"tool":"echo","args":{"message":"benchmark"}}`,
	`{"server":"s","tool":"t","args":{}}`,
	` { "tool" : "echo" } `,
	`{"tool":"e\u0063ho","args":null}`, `{"tool":"é","args":"{\"a\":1}"}`, "{\"tool\":\"\xff\"}",
	`{"args":[1,2]}`, `{"server":"s"}`, `{}`, `{"tool":null}`, `{"tool":1}`, `{"tool":"a","tool":"b"}`,
	`{"Tool":"a"}`, `{"tool":"a","search":"x"}`, `{"tool":"a","x":1}`, `{"tool":"a"} x`, `{"tool":"a"}{}`,
	`{"tool":"a",}`, `[]`, `"x"`, `{"tool":"a","args":{"b":}}`, `{"read":"r"}`, `{"search":null}`, `{"limit":2}`,
}

// TestFastArgsSameAsDecoder: what the fast path reads, the encoding/json
// decoder reads the same; calls take the fast path.
func TestFastArgsSameAsDecoder(t *testing.T) {
	for _, s := range argSeeds {
		sameArgs(t, []byte(s))
	}
	for _, s := range argSeeds[:3] {
		var a mcpArgs
		if !fastArgs(json.RawMessage(s), &a) {
			t.Errorf("a plain call does not take the fast path: %s", s)
		}
	}
}

// sameArgs: when the fast path takes raw, the decoder alone reads it the
// same, without error (otherwise decodeArgs is the decoder alone).
func sameArgs(t *testing.T, raw []byte) {
	t.Helper()
	var got mcpArgs
	if !fastArgs(raw, &got) {
		return
	}
	want, werr := decodeArgsJSON(raw)
	if werr != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: fastArgs %+v; the decoder %+v, %v", raw, got, want, werr)
	}
}

func FuzzFastArgs(f *testing.F) {
	for _, s := range argSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(sameArgs)
}

var resultSeeds = []string{
	`{"content":[{"type":"text","text":"echo: benchmark"}]}`,
	`{"content":[{"type":"text","text":"a"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"isError":false}`,
	`{"content":[],"structuredContent":{"x":1},"isError":true,"_meta":{"a":1}}`,
	`{"content":[{"type":"resource_link","uri":"file:///a","name":"a","annotations":{"x":1}}]}`,
	`{"content":[{"type":"resource","resource":{"uri":"a","text":"t"}}]}`, `{"content":[{"type":"text","resource":null}]}`,
	`{"content":null,"structuredContent":null,"isError":null}`, `{}`, `{"content":[null]}`, `{"content":[1]}`,
	`{"content":{}}`, `{"content":[{"type":1}]}`, `{"content":[{"type":"text","text":"\u00e9\n","Text":"x"}]}`,
	`{"content":[{"type":"text","type":"x"}]}`, `{"Content":[]}`, `{"isError":"yes"}`, `{"isError":1}`,
	`[]`, `null`, `{"content":[{"type":"text","text":"a"}]} x`, "{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}",
}

// TestFastCallResultSameAsUnmarshal: decodeCallResult gives what
// json.Unmarshal gives, and takes the fast path for the usual results.
func TestFastCallResultSameAsUnmarshal(t *testing.T) {
	for _, s := range resultSeeds {
		sameResult(t, []byte(s))
	}
	for _, s := range resultSeeds[:4] {
		var r callResult
		if !fastCallResult(json.RawMessage(s), &r) {
			t.Errorf("a usual result does not take the fast path: %s", s)
		}
	}
}

func sameResult(t *testing.T, raw []byte) {
	t.Helper()
	got, gerr := decodeCallResult(raw)
	var want callResult
	werr := json.Unmarshal(raw, &want)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%q: decodeCallResult error %v, json.Unmarshal %v", raw, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decodeCallResult %+v, json.Unmarshal %+v", raw, got, want)
	}
}

func FuzzFastCallResult(f *testing.F) {
	for _, s := range resultSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(sameResult)
}

func sameQuoted(t *testing.T, s string) {
	t.Helper()
	want, _ := json.Marshal(s)
	if got := jsonscan.AppendMarshalString([]byte("x"), s); string(got) != "x"+string(want) {
		t.Fatalf("jsonscan.AppendMarshalString(%q) = %s, json.Marshal %s", s, got[1:], want)
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"echo", "", "a_b-c.d/e:f", `a"b`, `a\b`, "<&>", "é", "\x00", "\x7f", "\xff", "a\u2028b"} {
		sameQuoted(t, s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"echo", `a"b`, "<&>", "é", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(sameQuoted)
}
