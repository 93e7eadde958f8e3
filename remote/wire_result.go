package remote

import (
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
		m := d.value()
		if !d.ok {
			return r, false
		}
		r.Details = m.(map[string]any)
	}
	return r, true
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
		m := map[string]any{}
		d.i++
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
			m[k] = d.value()
			d.space()
			c := d.data[d.i]
			d.i++
			if c == '}' {
				break
			}
		}
		return m
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
