package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var envelopeKeys = []string{"id", "method", "params", "result", "error"}

// envelope is what encoding/json makes of the same keys: the reference
// Object is held to.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (e *envelope) fields() [][]byte { return [][]byte{e.ID, e.Method, e.Params, e.Result, e.Error} }

// seeds are realistic frames and hostile inputs, for the tests and as the
// fuzz corpus.
var seeds = []string{
	`{"jsonrpc":"2.0","method":"notifications/events/event","params":{"eventId":"evt-000000001","name":"bench.event","timestamp":"2026-01-01T00:00:00.000Z","cursor":"cur-1","data":{"path":"/tmp/x","op":"write","size":1234},"_meta":{"io.modelcontextprotocol/subscriptionId":"mcprt-ab-7"}}}`,
	`{"jsonrpc":"2.0","id":"mcprt-ab-3","result":{"content":[{"type":"text","text":"ok"}],"isError":false}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found","data":null}}`,
	`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`,
	` { "id" : null , "method" : "a" , "params" : [ 1 , -2.5e+3 , true , false , null , { } , [ ] ] } `,
	`{}`, `{ }`, `[]`, `null`, `"x"`, `1`, ``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a":1}}`, `{"a":1} x`,
	`{"id":1,"id":2}`, `{"method":"x","method":null}`, `{"ID":1}`, `{"Method":"x"}`, `{"meThod":"x"}`, `{"méthod":"x"}`,
	`{"meth\u006fd":"x"}`, `{"\u0069d":1}`, `{"para\ms":1}`, `{"id":"\ud800"}`, `{"id":"a\"b"}`, `{"id":"\/"}`,
	`{"id":01}`, `{"id":-}`, `{"id":1.}`, `{"id":.5}`, `{"id":1e}`, `{"id":1e+}`, `{"id":-0.0E-0}`, `{"id":tru}`, `{"id":truex}`,
	`{"id":nul}`, `{"id":"` + "\x01" + `"}`, `{"id":"` + "\xff" + `"}`, "{\"id\":\"\xe2\x80\xa8\"}", "\ufeff{}", `{"a":1}` + "\x00",
	"{\"id\":1}\n", "\t{\"id\":1}\r", `{"id":[1,2,]}`, `{"id":[,]}`, `{"id":{"a":1,"a":2}}`, `{"id":{"A":1}}`, `{"id":"\u00e9\uD83D\uDE00"}`,
	`{"ſ":1}`, `{"K":1}`, `{"result":{"params":1},"params":2}`, `{"error":"bare string"}`, `{"error":{"code":"abc","message":"m"}}`,
	strings.Repeat("[", 20) + strings.Repeat("]", 20), `{"d":` + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + `}`,
	`{"d":` + strings.Repeat(`{"a":`, 999) + `1` + strings.Repeat("}", 999) + `}`,
}

// check runs Object and encoding/json on data and fails if Object is sure
// and disagrees with encoding/json (a struct, case-insensitive and last
// duplicate wins; and a map, exact keys) or accepts invalid JSON.
func check(t *testing.T, data []byte) bool {
	t.Helper()
	vals := make([][]byte, len(envelopeKeys))
	ok := Object(data, envelopeKeys, vals)
	if !ok {
		return false
	}
	if !json.Valid(data) {
		t.Fatalf("Object accepted invalid JSON %q", data)
	}
	var e envelope
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("Object sure of %q, json.Unmarshal: %v", data, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("Object sure of %q, json.Unmarshal into a map: %v", data, err)
	}
	for i, want := range e.fields() {
		if (vals[i] == nil) != (want == nil) || string(vals[i]) != string(want) {
			t.Fatalf("%q: %s = %q, encoding/json %q", data, envelopeKeys[i], vals[i], want)
		}
		if mv, in := m[envelopeKeys[i]]; in != (vals[i] != nil) || string(mv) != string(vals[i]) {
			t.Fatalf("%q: %s = %q, encoding/json into a map %q", data, envelopeKeys[i], vals[i], mv)
		}
	}
	return true
}

func TestObjectSeeds(t *testing.T) {
	sure := 0
	for _, s := range seeds {
		if check(t, []byte(s)) {
			sure++
		}
	}
	// The realistic frames must take the fast path.
	for _, s := range seeds[:5] {
		if !Object([]byte(s), envelopeKeys, make([][]byte, 5)) {
			t.Errorf("not sure of a plain frame: %s", s)
		}
	}
	t.Logf("sure of %d of %d seeds", sure, len(seeds))
}

func TestObjectNotSure(t *testing.T) {
	for _, s := range []string{
		`{"id":1,"id":2}`,           // a wanted key twice: the last wins in encoding/json
		`{"ID":1}`, `{"Params":{}}`, // case: encoding/json matches struct fields without it
		`{"\u0069d":1}`, `{"ſ":1}`, // an escaped or non-ASCII key
		`{"id":1} x`, `{"id":1,}`, `[{"id":1}]`, `null`, // not one valid object
		`{"d":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`,
	} {
		if Object([]byte(s), envelopeKeys, make([][]byte, 5)) {
			t.Errorf("sure of %q", s)
		}
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","other":{"ID":1,"id":2,"id":3,"\u0069d":4}}`, // only top-level keys matter
		`{"iD ":1,"ids":2,"_id":3}`,                                    // near misses
		`{"d":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + `}`,
	} {
		if !check(t, []byte(s)) {
			t.Errorf("not sure of %q", s)
		}
	}
}

func TestString(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		ok        bool
	}{
		{`"plain"`, "plain", true},
		{`""`, "", true},
		{`"a\"b\\c\/\n\u00e9"`, "a\"b\\c/\né", true},
		{`"\ud83d\ude00"`, "😀", true},
		{`"\ud800"`, "\ufffd", true},
		{"\"\xff\"", "\ufffd", true},
		{`"é"`, "é", true},
		{`null`, "", false},
		{`1`, "", false},
		{`"open`, "", false},
		{`"`, "", false},
		{"\"a\x01\"", "", false},
	} {
		got, ok := String([]byte(c.raw))
		if got != c.want || ok != c.ok {
			t.Errorf("String(%q) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}

func FuzzObject(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data)
	})
}

func FuzzString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b"`, `"\ud800x"`, "\"\xff\"", `"\u00e9"`, `null`, `"x" `, ` "x"`, `"x`, `x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := String(raw)
		var want string
		err := json.Unmarshal(raw, &want)
		if ok && (err != nil || got != want) {
			t.Fatalf("String(%q) = %q; json.Unmarshal: %q, %v", raw, got, want, err)
		}
		if !ok && err == nil && len(raw) > 0 && raw[0] == '"' {
			t.Fatalf("String(%q) refused a string json.Unmarshal reads as %q", raw, want)
		}
	})
}

// Vocabularies for FuzzObjectMembers: keys that are wanted, wanted but for
// case, escaped or non-ASCII, and unwanted; values of every kind.
var (
	fuzzKeys = []string{`"id"`, `"method"`, `"params"`, `"result"`, `"error"`, `"ID"`, `"Method"`, `"PARAMS"`,
		`"\u0069d"`, `"méthod"`, `"ſ"`, `"jsonrpc"`, `"_meta"`, `"x"`, `"iD "`, `""`}
	fuzzValues = []string{`1`, `-0.5e+3`, `"s"`, `"\u00e9\n"`, `null`, `true`, `[]`, `{}`, `{"id":1,"id":2}`,
		`[1,{"a":[null]}]`, `"` + "\xff" + `"`, `0`, `{"ID":"x"}`, `1.`, `"`, ``}
	fuzzSpace = []string{``, ` `, "\n\t", "\r "}
)

// FuzzObjectMembers builds objects from the vocabularies above, so that
// most inputs are valid JSON and the sure path is what is tested: each
// byte of prog is one member (key, value, spacing); text is one more
// value, quoted and raw.
func FuzzObjectMembers(f *testing.F) {
	f.Add([]byte{0x00, 0x11, 0x22}, "text")
	f.Add([]byte{0x05, 0x40, 0x90}, `a"b`)
	f.Add([]byte{0x0b, 0x1c, 0x22, 0x33, 0x44}, "")
	f.Fuzz(func(t *testing.T, prog []byte, text string) {
		quoted, _ := json.Marshal(text)
		values := append(append([]string(nil), fuzzValues...), string(quoted), text)
		var b strings.Builder
		b.WriteString("{")
		for i, c := range prog {
			if i > 0 {
				b.WriteString(",")
			}
			sp := fuzzSpace[(int(c)+i)%len(fuzzSpace)]
			b.WriteString(sp + fuzzKeys[int(c)%len(fuzzKeys)] + sp + ":" + values[int(c>>4)%len(values)])
		}
		b.WriteString("}")
		check(t, []byte(b.String()))
	})
}

func TestCompact(t *testing.T) {
	for s, want := range map[string]bool{
		`{"a":[1,"b c",{"d":null}]}`: true, `"x y"`: true, `1`: true, `null`: true,
		`{"a": 1}`: false, ` 1`: false, `1 `: false, "[1,\n2]": false, `{"a":1`: false, ``: false, `{"a":1}{}`: false,
	} {
		if got := Compact([]byte(s)); got != want {
			t.Errorf("Compact(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzCompact: what Compact accepts, json.Compact copies unchanged.
func FuzzCompact(f *testing.F) {
	for _, s := range append(seeds, `"a b"`, `[1, 2]`, `{"x":"\t"}`, "1\n") {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !Compact(data) {
			return
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil || buf.String() != string(data) {
			t.Fatalf("Compact(%q) is sure; json.Compact gives %q, %v", data, buf.Bytes(), err)
		}
	})
}

// ValueEnd finds the value after any whitespace and where it ends, or
// says it is not valid JSON.
func TestValueEnd(t *testing.T) {
	for _, c := range []struct {
		in         string
		start, end int
	}{
		{`  {"a":"}]\""} ,`, 2, 14},
		{`-12.5e3 ,`, 0, 7},
		{`"x\\" }`, 0, 5},
		{` [[],{}]`, 1, 8},
		{`null}`, 0, 4},
		{` {"a":}`, 1, -1},
		{`tru`, 0, -1},
	} {
		if start, end := ValueEnd([]byte(c.in), 0); end != c.end || (end >= 0 && start != c.start) {
			t.Errorf("ValueEnd(%q) = %d, %d; want %d, %d", c.in, start, end, c.start, c.end)
		}
	}
}
