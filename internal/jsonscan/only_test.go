package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// checkOnly runs ObjectOnly and a json.Decoder that refuses unknown
// fields on data, and fails if ObjectOnly is sure and they disagree.
func checkOnly(t *testing.T, data []byte) bool {
	t.Helper()
	vals := make([][]byte, len(envelopeKeys))
	if !ObjectOnly(data, envelopeKeys, vals) {
		return false
	}
	if !check(t, data) {
		t.Fatalf("ObjectOnly sure of %q, Object not", data)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e envelope
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("ObjectOnly sure of %q, Decoder with DisallowUnknownFields: %v", data, err)
	}
	for i, want := range e.fields() {
		if (vals[i] == nil) != (want == nil) || string(vals[i]) != string(want) {
			t.Fatalf("%q: %s = %q, encoding/json %q", data, envelopeKeys[i], vals[i], want)
		}
	}
	return true
}

func TestObjectOnly(t *testing.T) {
	for _, s := range seeds {
		checkOnly(t, []byte(s))
	}
	for _, s := range []string{`{"id":1,"method":"m"}`, ` {"params":{"x":1}} `, `{}`} {
		if !checkOnly(t, []byte(s)) {
			t.Errorf("not sure of %q", s)
		}
	}
	for _, s := range []string{`{"id":1,"x":2}`, `{"jsonrpc":"2.0"}`, `{"ID":1}`, `{"id":1,"id":2}`, `{"id":1} x`} {
		if ObjectOnly([]byte(s), envelopeKeys, make([][]byte, 5)) {
			t.Errorf("sure of %q", s)
		}
	}
}

func FuzzObjectOnly(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkOnly(t, data)
	})
}

// checkArray runs Array and json.Unmarshal into []json.RawMessage on raw
// and fails if Array is sure and they disagree.
func checkArray(t *testing.T, raw []byte) bool {
	t.Helper()
	got, ok := Array(raw, nil)
	if !ok {
		return false
	}
	var want []json.RawMessage
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("Array sure of %q, json.Unmarshal: %v", raw, err)
	}
	if len(got) != len(want) {
		t.Fatalf("Array(%q): %d elements, encoding/json %d", raw, len(got), len(want))
	}
	for i := range got {
		if string(got[i]) != string(want[i]) {
			t.Fatalf("Array(%q)[%d] = %q, encoding/json %q", raw, i, got[i], want[i])
		}
	}
	return true
}

var arraySeeds = []string{
	`[]`, `[ ]`, `[1]`, `[ 1 , "a" ,{"b":[2]}, null,true ]`, `[{"type":"text","text":"echo: benchmark"}]`,
	` []`, `[] `, `[`, `]`, `[1,]`, `[,1]`, `[1 2]`, `null`, `{}`, `"[]"`, `[1]x`, `[01]`, `["` + "\x01" + `"]`,
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
}

func TestArray(t *testing.T) {
	sure := map[string]bool{}
	for _, s := range arraySeeds {
		sure[s] = checkArray(t, []byte(s))
	}
	for _, s := range arraySeeds[:5] {
		if !sure[s] {
			t.Errorf("not sure of %q", s)
		}
	}
	for _, s := range arraySeeds[5:] {
		if sure[s] && s != strings.Repeat("[", MaxDepth)+strings.Repeat("]", MaxDepth) {
			t.Errorf("sure of %q", s)
		}
	}
	if !sure[strings.Repeat("[", MaxDepth)+strings.Repeat("]", MaxDepth)] || sure[strings.Repeat("[", MaxDepth+1)+strings.Repeat("]", MaxDepth+1)] {
		t.Error("Array's depth limit is not MaxDepth")
	}
}

func FuzzArray(f *testing.F) {
	for _, s := range append(arraySeeds, seeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkArray(t, raw)
	})
}
