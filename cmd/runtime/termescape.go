package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Human output never lets server text drive the terminal: tool output,
// instructions, names, descriptions and error messages all come from
// servers, and a terminal obeys control bytes (escape sequences set the
// window title, write the clipboard with OSC 52, clear the screen; a
// carriage return overwrites a line; bidi overrides reorder what is shown).
// escapeTerminal replaces every such character with a visible escape:
//   - C0 controls other than newline and tab, and DEL: \xNN (a carriage
//     return directly before a newline is kept: CRLF line ends are harmless);
//   - C1 controls (U+0080-U+009F): \u0080 ... \u009F;
//   - bidi embeddings, overrides and isolates (U+202A-U+202E,
//     U+2066-U+2069): \u202A ...;
//   - bytes that are not UTF-8: \xNN.
//
// ESC is a C0 control, so no escape sequence survives: its remaining bytes
// print as the plain text they are. `--json` output is exact (JSON escapes
// what it must), so it is never passed through here.
func escapeTerminal(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteByte('\r')
		case unsafeRune(r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether r must not reach a terminal as it is.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// needsEscape is the fast path: plain printable text is returned as is.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return true
		}
		if c >= 0x80 {
			return !utf8.ValidString(s[i:]) || strings.ContainsFunc(s[i:], unsafeRune)
		}
	}
	return false
}

// termWriter escapes what it writes (escapeTerminal) unless raw reports
// true (--json). A character split across two writes is held until its
// end arrives, so the escaping does not depend on how output is chunked;
// flush writes what is held at the end.
type termWriter struct {
	w       io.Writer
	raw     func() bool
	pending []byte
}

func (t *termWriter) Write(p []byte) (int, error) {
	if t.raw != nil && t.raw() {
		if err := t.flush(); err != nil {
			return 0, err
		}
		return t.w.Write(p)
	}
	buf := append(t.pending, p...)
	t.pending = nil
	cut := len(buf) - heldTail(buf)
	t.pending = append([]byte(nil), buf[cut:]...)
	if cut == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(t.w, escapeTerminal(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes (escaped) what a last write left held.
func (t *termWriter) flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	s := escapeTerminal(string(t.pending))
	t.pending = nil
	_, err := io.WriteString(t.w, s)
	return err
}

// heldTail is how many bytes at the end of b may be the start of a
// character (or of a CRLF) that the next write completes.
func heldTail(b []byte) int {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return 1
	}
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte: held if its character is incomplete
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
