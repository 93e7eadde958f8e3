package main

import (
	"strings"
	"testing"
)

func TestEscapeTerminal(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text\n\twith tab", "plain text\n\twith tab"},
		{"héllo → ünïcode ✓", "héllo → ünïcode ✓"},
		{"a\x1b]0;title\x07b", `a\x1b]0;title\x07b`},
		{"over\rwrite", `over\x0dwrite`},
		{"crlf\r\nline", "crlf\r\nline"},
		{"cr at end\r", `cr at end\x0d`},
		{"del\x7f nul\x00 bs\x08", `del\x7f nul\x00 bs\x08`},
		{"c1 \u009b31m \u0085", `c1 \u009B31m \u0085`},
		{"bidi \u202eevil\u202c \u2066iso\u2069", `bidi \u202Eevil\u202C \u2066iso\u2069`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
	} {
		if got := escapeTerminal(tc.in); got != tc.want {
			t.Errorf("escapeTerminal(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if bad := terminalUnsafe(escapeTerminal(tc.in)); bad != "" {
			t.Errorf("escapeTerminal(%q) still holds %s", tc.in, bad)
		}
	}
}

// termWriter escapes the same however the output is chunked (a character
// or a CRLF split across writes), and is exact when raw.
func TestTermWriterChunking(t *testing.T) {
	in := "x\u202ey\r\nz\u00e9\u009b\rw\xff"
	want := escapeTerminal(in)
	for size := 1; size <= len(in); size++ {
		var b strings.Builder
		w := &termWriter{w: &b}
		for i := 0; i < len(in); i += size {
			if _, err := w.Write([]byte(in[i:min(i+size, len(in))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("chunks of %d: %q, want %q", size, b.String(), want)
		}
	}
	var b strings.Builder
	w := &termWriter{w: &b, raw: func() bool { return true }}
	_, _ = w.Write([]byte(in))
	if b.String() != in {
		t.Errorf("raw: %q", b.String())
	}
}
