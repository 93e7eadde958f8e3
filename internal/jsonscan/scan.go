package jsonscan

import (
	"encoding/json"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting Object accepts (the object itself is
// depth 1); deeper input is "not sure". encoding/json allows 10,000.
const MaxDepth = 1000

// Object scans data, which must be exactly one JSON object with optional
// JSON whitespace around it, and sets vals[i] to the raw value of the
// member named keys[i] (a subslice of data, without surrounding space), or
// nil when there is none; vals must be at least as long as keys. It
// reports whether it is sure: false when data is not valid JSON or not an
// object, when a top-level key has an escape or a non-ASCII byte, when a
// wanted key appears twice, when another key equals a wanted one but for
// ASCII case (encoding/json matches struct fields case-insensitively, and
// the last duplicate wins), or when nesting is deeper than MaxDepth. The
// wanted keys must be ASCII without escapes. After false, vals is
// unspecified.
func Object(data []byte, keys []string, vals [][]byte) bool {
	for i := range keys {
		vals[i] = nil
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	end := object(data, i, 1, keys, vals, false)
	return end >= 0 && skipSpace(data, end) == len(data)
}

// String returns what json.Unmarshal gives for raw into a Go string when
// raw is one JSON string starting at its first byte (as Object returns
// values), and false for anything else, null included. A string with no
// escape and valid UTF-8 is its bytes between the quotes; any other goes
// through encoding/json (escapes, and invalid UTF-8 that it replaces with
// U+FFFD).
func String(raw []byte) (string, bool) {
	n := len(raw)
	if n < 2 || raw[0] != '"' {
		return "", false
	}
	plain := raw[n-1] == '"'
	for _, c := range raw[1 : n-1] {
		if c < 0x20 || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain && utf8.Valid(raw[1:n-1]) {
		return string(raw[1 : n-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// Compact reports whether data is one valid JSON value with no space
// outside its strings, so that json.Compact would copy it unchanged. It
// says false, as "not sure", for nesting deeper than MaxDepth.
func Compact(data []byte) bool {
	if value(data, 0, 0) != len(data) {
		return false
	}
	for i := 0; i < len(data); {
		switch data[i] {
		case '"':
			if i, _ = skipString(data, i); i < 0 {
				return false // not reached: value has read this string
			}
		case ' ', '\t', '\n', '\r':
			return false
		default:
			i++
		}
	}
	return true
}

// object validates the object starting at data[i] ('{') and returns the
// index just past it, or -1 when it is invalid or, for the top-level
// object (keys not nil), when a key makes it unsure (with only, also a key
// that is not wanted). depth is the object's own nesting depth.
func object(data []byte, i, depth int, keys []string, vals [][]byte, only bool) int {
	if depth > MaxDepth {
		return -1
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return -1
		}
		start := i
		var plain bool
		i, plain = skipString(data, i)
		if i < 0 || keys != nil && !plain {
			return -1
		}
		key := data[start+1 : i-1]
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != ':' {
			return -1
		}
		vstart := skipSpace(data, i+1)
		i = value(data, vstart, depth)
		if i < 0 {
			return -1
		}
		if keys != nil && !record(key, data[vstart:i], keys, vals, only) {
			return -1
		}
		var closed bool
		if i, closed = next(data, i, '}'); closed {
			return i
		}
	}
}

// record keeps v as the value of key if key is wanted; it reports false
// (not sure) for a wanted key seen before, for a key that equals a wanted
// one only when case is ignored, and, with only, for a key not wanted.
func record(key, v []byte, keys []string, vals [][]byte, only bool) bool {
	for k, want := range keys {
		if string(key) == want {
			if vals[k] != nil {
				return false
			}
			vals[k] = v
			return true
		}
		if foldEqual(key, want) {
			return false
		}
	}
	return !only
}

// foldEqual reports whether the ASCII key equals want when ASCII letters
// are compared without case.
func foldEqual(key []byte, want string) bool {
	if len(key) != len(want) {
		return false
	}
	for i := range len(key) {
		a, b := key[i], want[i]
		if a != b && (a|0x20 != b|0x20 || a|0x20 < 'a' || a|0x20 > 'z') {
			return false
		}
	}
	return true
}

// array validates the array starting at data[i] ('[') and returns the
// index just past it, or -1.
func array(data []byte, i, depth int) int {
	if depth > MaxDepth {
		return -1
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1
	}
	for {
		i = value(data, i, depth)
		if i < 0 {
			return -1
		}
		var closed bool
		if i, closed = next(data, i, ']'); closed {
			return i
		}
	}
}

// next reads what follows a member or an element that ends at data[i]: a
// comma (it returns where the next one starts, and false) or the
// container's closing byte (the index just past it, and true). Anything
// else is invalid: -1 and true.
func next(data []byte, i int, closing byte) (int, bool) {
	i = skipSpace(data, i)
	switch {
	case i >= len(data):
		return -1, true
	case data[i] == ',':
		return skipSpace(data, i+1), false
	case data[i] == closing:
		return i + 1, true
	}
	return -1, true
}

// ValueEnd validates the JSON value at data[i] (after any whitespace) and
// returns where it starts and the index just past it; end is -1 when it
// is not valid JSON.
func ValueEnd(data []byte, i int) (start, end int) {
	start = skipSpace(data, i)
	return start, value(data, start, 0)
}

// value validates the value starting at data[i] (no leading space), inside
// a container of depth depth, and returns the index just past it, or -1.
func value(data []byte, i, depth int) int {
	if i >= len(data) {
		return -1
	}
	switch c := data[i]; {
	case c == '"':
		end, _ := skipString(data, i)
		return end
	case c == '{':
		return object(data, i, depth+1, nil, nil, false)
	case c == '[':
		return array(data, i, depth+1)
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return number(data, i)
	}
	return -1
}

// plainByte holds the string bytes that need no look: printable ASCII but
// the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipString validates the string starting at data[i] ('"') and returns
// the index just past its closing quote, or -1, and whether it is plain:
// no escape and only ASCII.
func skipString(data []byte, i int) (int, bool) {
	plain := true
	for i++; i < len(data); i++ {
		for i < len(data) && plainByte[data[i]] {
			i++
		}
		if i >= len(data) {
			break
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, plain
		case c == '\\':
			plain = false
			i++
			if i >= len(data) {
				return -1, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) || !hex(data[i+1]) || !hex(data[i+2]) || !hex(data[i+3]) || !hex(data[i+4]) {
					return -1, false
				}
				i += 4
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		default: // c >= utf8.RuneSelf
			plain = false
		}
	}
	return -1, false
}

func hex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number validates the number starting at data[i] and returns the index
// just past it, or -1. What follows is the caller's to check.
func number(data []byte, i int) int {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = skipDigits(data, i+1)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := skipDigits(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && data[i]|0x20 == 'e' {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := skipDigits(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// skipDigits returns the index of the first byte at or after i that is not
// a digit.
func skipDigits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// literal checks that data[i:] starts with lit and returns the index just
// past it, or -1.
func literal(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
