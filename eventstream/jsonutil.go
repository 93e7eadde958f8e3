package eventstream

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcprt/mcprt/internal/jsonscan"
)

// Cursor is an opaque replay position. The zero value is null: no position
// ("from now"). Cursors are strings on the wire; any other JSON value is
// read as null, as the reference client does.
type Cursor struct {
	value string // the cursor when set
	set   bool   // false: null
}

// CursorOf returns the cursor s.
func CursorOf(s string) Cursor { return Cursor{value: s, set: true} }

// Value returns the cursor and whether there is one.
func (c Cursor) Value() (string, bool) { return c.value, c.set }

// IsNull reports whether there is no cursor.
func (c Cursor) IsNull() bool { return !c.set }

// String returns the cursor, or "null".
func (c Cursor) String() string {
	if !c.set {
		return "null"
	}
	return c.value
}

// MarshalJSON writes a string, or null.
func (c Cursor) MarshalJSON() ([]byte, error) {
	if !c.set {
		return []byte("null"), nil
	}
	return jsonscan.AppendString(nil, c.value), nil
}

// UnmarshalJSON reads a string; anything else (null, a number, an object)
// is null. It fails only on malformed JSON, which the decoder has already
// rejected.
func (c *Cursor) UnmarshalJSON(b []byte) error {
	*c = Cursor{}
	if len(b) > 0 && b[0] == '"' {
		s, err := unquote(b)
		if err != nil {
			return err
		}
		*c = CursorOf(s)
	}
	return nil
}

// unquote decodes the JSON string b. The decoder has already validated
// it, so a string with no escape and valid UTF-8 is its bytes between the
// quotes; anything else goes through encoding/json.
func unquote(b []byte) (string, error) {
	if n := len(b); n >= 2 && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b[1 : n-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// looseString is a field that is kept when it is a JSON string and ignored
// (left empty, ok false) when it is any other value.
type looseString struct {
	s  string // the value when ok
	ok bool   // the field was a string
}

func (l *looseString) UnmarshalJSON(b []byte) error {
	*l = looseString{}
	if len(b) > 0 && b[0] == '"' {
		s, err := unquote(b)
		if err != nil {
			return err
		}
		*l = looseString{s: s, ok: true}
	}
	return nil
}

// flag is true only for the JSON literal true (the reference tests
// `=== true`); any other value is false.
type flag bool

func (f *flag) UnmarshalJSON(b []byte) error {
	*f = flag(string(b) == "true")
	return nil
}

// encode is json.Marshal without HTML escaping (so "<" stays one byte and
// sizes measure what the model reads) and without the encoder's newline.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// isObject reports whether raw is a JSON object (leading space allowed).
func isObject(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}

// chars reports whether s has at most n characters (code points). Strings
// of at most n bytes are accepted without counting.
func chars(s string, n int) bool {
	return len(s) <= n || utf8.RuneCountInString(s) <= n
}

// cut returns the longest prefix of s of at most n characters (UTF-16 code
// units, as the reference counts them) that does not split a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s // at most n bytes: at most n characters
	}
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2 // a surrogate pair: never split
		}
		if units+w > n {
			return s[:i]
		}
		units += w
	}
	return s
}

// utf16Len is the length of b, valid UTF-8 (as every encoding this
// package makes is), as a JavaScript string: its UTF-16 code units. Every
// character counts 1 but those outside the Basic Multilingual Plane
// (4-byte sequences, encoded as surrogate pairs), which count 2: so the
// count is the bytes that start a character plus the bytes that start a
// 4-byte one.
func utf16Len(b []byte) int {
	n := 0
	for _, c := range b {
		if c < 0x80 {
			n++
			continue
		}
		if c&0xC0 != 0x80 {
			n++
		}
		if c >= 0xF0 {
			n++
		}
	}
	return n
}

// appendCompact appends the JSON value raw with insignificant space removed
// (as encoding/json writes a json.RawMessage); nil is null.
func appendCompact(b []byte, raw []byte) ([]byte, error) {
	if raw == nil {
		return append(b, "null"...), nil
	}
	if jsonscan.Compact(raw) {
		return append(b, raw...), nil // valid, with no space to remove
	}
	// json.Compact validates as it goes and never escapes HTML, matching
	// how encoding/json writes a RawMessage with SetEscapeHTML(false).
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return b, err
	}
	return buf.Bytes(), nil
}
