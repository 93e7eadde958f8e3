package catalog

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Server-provided text reaches the model and, through the CLI, a terminal.
// CleanText removes what could steer either one without being seen:
// terminal control characters (C0 except tab, line feed and carriage
// return; DEL; C1, which holds the 8-bit CSI and OSC) and the bidirectional
// formatting characters that reorder what a reader sees (U+061C, U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069). An escape character goes with
// the sequence it starts (ESC [ ... final byte, ESC ] ... BEL or ST), so no
// "[31m" is left behind. Invalid UTF-8 becomes U+FFFD.

// CleanText returns s without terminal and bidi control characters.
func CleanText(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		if r == 0x1b {
			i += escapeLen(s[i:])
			continue
		}
		if r == 0x9b || r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f {
			// The 8-bit CSI, OSC, DCS, SOS, PM and APC: as their ESC forms.
			intro := "\x1b["
			if r != 0x9b {
				intro = "\x1b]"
			}
			i += n + escapeLen(intro+s[i+n:]) - len(intro)
			continue
		}
		if isControl(r) {
			i += n
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// needsCleaning is CleanText's fast path: most text has nothing to remove.
func needsCleaning(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f || c >= 0x80 {
			if c >= 0x80 {
				return !utf8.ValidString(s[i:]) || hasControlRune(s[i:])
			}
			return true
		}
	}
	return false
}

func hasControlRune(s string) bool {
	for _, r := range s {
		if isControl(r) {
			return true
		}
	}
	return false
}

// isControl reports whether r is removed by CleanText.
func isControl(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// maxEscapeString bounds how far an OSC, DCS, SOS, PM or APC string is
// looked for its end; without one, only its introducer is removed.
const maxEscapeString = 4096

// escapeLen returns how many bytes the escape sequence at the start of s
// (s[0] is ESC) takes: CSI up to its final byte, OSC, DCS, SOS, PM and APC
// up to BEL or ST (CSI's parameters and OSC's string are removed with
// them), any other ESC with the one character after it.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		i := 2
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			i++
		}
		return i
	case ']', 'P', 'X', '^', '_':
		for i := 2; i < len(s) && i < maxEscapeString; i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return 2
	}
	_, n := utf8.DecodeRuneInString(s[1:])
	return 1 + n
}

// CleanSchemaText returns a schema whose "title" and "description" strings
// (at any depth) are cleaned with CleanText, for a schema the model reads
// (a direct tool's). A schema without anything to clean is returned as it
// is; one that does not decode is returned unchanged.
func CleanSchemaText(raw []byte) []byte {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return raw
	}
	changed := false
	var walk func(any)
	walk = func(x any) {
		switch n := x.(type) {
		case map[string]any:
			for k, e := range n {
				if s, ok := e.(string); ok && (k == "title" || k == "description") {
					if c := CleanText(s); c != s {
						n[k], changed = c, true
					}
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range n {
				walk(e)
			}
		}
	}
	walk(v)
	if !changed {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}
