package remote

import (
	"encoding/json"
	"math"
	"strconv"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/jsonscan"
)

// A tool's result is what a session reads most (every tool call): read
// here as json.Unmarshal would read it into an mcprt.Result, in one
// validating pass (jsonscan) and one building pass, without reflection;
// whatever this is not sure of (images, a null, a number out of range)
// goes through encoding/json (TestResultFastPath).

var resultKeys = []string{"text", "details", "isError", "images"}

// decodeResult reads b into a Result; false when not sure.
func decodeResult(b []byte) (mcprt.Result, bool) {
	var r mcprt.Result
	var v [4][]byte
	if !jsonscan.Object(b, resultKeys, v[:]) || v[3] != nil {
		return r, false
	}
	if v[0] != nil {
		s, ok := jsonscan.String(v[0])
		if !ok {
			return r, false
		}
		r.Text = s
	}
	switch string(v[2]) {
	case "", "false":
	case "true":
		r.IsError = true
	default:
		return r, false
	}
	if raw := v[1]; raw != nil {
		if raw[0] != '{' {
			return r, false
		}
		d := anyReader{data: raw, ok: true}
		m := d.details()
		if !d.ok {
			return r, false
		}
		r.Details = m
	}
	return r, true
}

// readResult reads a tool result the session received: by hand when sure,
// else by encoding/json. Either way details' "result" (the server's raw
// result) stays a json.RawMessage, as an embedded runtime's is.
func readResult(b []byte) (mcprt.Result, error) {
	if r, ok := decodeResult(b); ok {
		return r, nil
	}
	return unmarshalResult(b)
}

// unmarshalResult is readResult by encoding/json alone.
func unmarshalResult(b []byte) (mcprt.Result, error) {
	var r mcprt.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return r, err
	}
	var raw struct {
		Details struct {
			Result json.RawMessage `json:"result"`
		} `json:"details"`
	}
	if json.Unmarshal(b, &raw) == nil && r.Details != nil && raw.Details.Result != nil && string(raw.Details.Result) != "null" {
		r.Details["result"] = raw.Details.Result
	}
	return r, nil
}

// anyReader builds what json.Unmarshal gives into an any (maps, []any,
// strings, float64, bools, nil) from valid JSON; ok turns false when a
// value would be read otherwise (then the caller uses encoding/json).
type anyReader struct {
	data []byte
	i    int
	ok   bool
}

func (d *anyReader) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *anyReader) value() any {
	d.space()
	switch c := d.data[d.i]; c {
	case '{':
		return d.object(false)
	case '[':
		a := []any{}
		d.i++
		d.space()
		if d.data[d.i] == ']' {
			d.i++
			return a
		}
		for d.ok {
			a = append(a, d.value())
			d.space()
			c := d.data[d.i]
			d.i++
			if c == ']' {
				break
			}
		}
		return a
	case '"':
		return d.str()
	case 't':
		d.i += len("true")
		return true
	case 'f':
		d.i += len("false")
		return false
	case 'n':
		d.i += len("null")
		return nil
	}
	start := d.i
	for d.i < len(d.data) {
		c := d.data[d.i]
		if c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' && (c < '0' || c > '9') {
			break
		}
		d.i++
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.i]), 64)
	if err != nil {
		d.ok = false
	}
	return f
}

// details reads a result's details object (at d.i, valid JSON): as value
// would, except that the top-level "result" stays its raw JSON (a copy).
func (d *anyReader) details() map[string]any {
	d.space()
	return d.object(true)
}

// object reads the object at d.i; keepResult keeps its "result" raw.
func (d *anyReader) object(keepResult bool) map[string]any {
	m := map[string]any{}
	d.i++ // '{'
	d.space()
	if d.data[d.i] == '}' {
		d.i++
		return m
	}
	for d.ok {
		d.space()
		k := d.str()
		d.space()
		d.i++ // ':'
		if keepResult && k == "result" {
			m[k] = rawOrNil(d.skip())
		} else {
			m[k] = d.value()
		}
		d.space()
		c := d.data[d.i]
		d.i++
		if c == '}' {
			break
		}
	}
	return m
}

// rawOrNil is a copy of raw, or nil for a JSON null (as encoding/json
// reads it into an any).
func rawOrNil(raw []byte) any {
	if string(raw) == "null" {
		return nil
	}
	return json.RawMessage(append([]byte(nil), raw...))
}

// skip passes over the value at d.i and returns it (as it stands, valid
// JSON: jsonscan read it all first).
func (d *anyReader) skip() []byte {
	start, end := jsonscan.ValueEnd(d.data, d.i)
	if end < 0 {
		d.ok, d.i = false, len(d.data)-1
		return nil
	}
	d.i = end
	return d.data[start:end]
}

// str reads the string at d.i.
func (d *anyReader) str() string {
	start := d.i
	for d.i++; d.i < len(d.data); d.i++ {
		if c := d.data[d.i]; c == '\\' {
			d.i++
		} else if c == '"' {
			break
		}
	}
	d.i++
	s, ok := jsonscan.String(d.data[start:d.i])
	if !ok {
		d.ok = false
	}
	return s
}

// appendResult appends res as JSON that reads back as json.Marshal's
// spelling of it would (the member's side of the same hot path); false
// when res holds what it does not write (images, a value of another type,
// arguments that are not compact JSON, a number JSON cannot hold).
func appendResult(b []byte, res mcprt.Result) ([]byte, bool) {
	if len(res.Images) > 0 {
		return b, false
	}
	b = jsonscan.AppendString(append(b, `{"text":`...), res.Text)
	if len(res.Details) > 0 {
		var ok bool
		if b, ok = appendAny(append(b, `,"details":`...), res.Details); !ok {
			return b, false
		}
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), true
}

// resultRoom is the room to make for res's JSON: its text and raw
// result, and more than enough for the rest of a call's details.
func resultRoom(res mcprt.Result) int {
	n := 256 + len(res.Text)
	if raw, ok := res.Details["result"].(json.RawMessage); ok {
		n += len(raw)
	}
	return n
}

func appendAny(b []byte, v any) ([]byte, bool) {
	ok := true
	switch v := v.(type) {
	case nil:
		b = append(b, "null"...)
	case string:
		b = jsonscan.AppendString(b, v)
	case bool:
		b = strconv.AppendBool(b, v)
	case int:
		b = strconv.AppendInt(b, int64(v), 10)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return b, false
		}
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	case json.RawMessage:
		if v == nil {
			return append(b, "null"...), true
		}
		if !jsonscan.Compact(v) {
			return b, false
		}
		b = append(b, v...)
	case map[string]any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '{')
		first := true
		for k, e := range v {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(jsonscan.AppendString(b, k), ':')
			if b, ok = appendAny(b, e); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendAny(b, e); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	default:
		return b, false
	}
	return b, true
}
