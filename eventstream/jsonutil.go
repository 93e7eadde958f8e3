package eventstream

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Cursor is an opaque replay position. The zero value is null: no position
// ("from now"). Cursors are strings on the wire; any other JSON value is
// read as null, as the reference client does.
type Cursor struct {
	value string
	set   bool
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
	return encode(c.value)
}

// UnmarshalJSON reads a string; anything else (null, a number, an object)
// is null. It fails only on malformed JSON, which the decoder has already
// rejected.
func (c *Cursor) UnmarshalJSON(b []byte) error {
	*c = Cursor{}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = CursorOf(s)
	}
	return nil
}

// looseString is a field that is kept when it is a JSON string and ignored
// (left empty, ok false) when it is any other value.
type looseString struct {
	s  string
	ok bool
}

func (l *looseString) UnmarshalJSON(b []byte) error {
	*l = looseString{}
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &l.s); err != nil {
			return err
		}
		l.ok = true
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

// cut returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
