package catalog

import (
	"strings"
	"testing"
)

func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\twith\ttabs\nand lines\r\n": "plain text\twith\ttabs\nand lines\r\n",
		"a\x1b[31mred\x1b[0m":                   "ared",
		"title\x1b]0;owned\x07after":            "titleafter",
		"st\x1b]8;;http://x\x1b\\link":          "stlink",
		"c1\u009b2Jcsi":                         "c1csi",
		"c1\u009d0;x\u0007osc":                  "c1osc",
		"bidi \u202eevil\u202c \u2066x\u2069":   "bidi evil x",
		"nul\x00del\x7f":                        "nuldel",
		"bad\xffutf8":                           "bad\ufffdutf8",
		"open\x1b]no end":                       "openno end",
		"é ü 日本":                                "é ü 日本",
	} {
		if got := CleanText(in); got != want {
			t.Errorf("CleanText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanDescription(t *testing.T) {
	long := strings.Repeat("é", MaxDescriptionBytes)
	got := CleanDescription(long)
	if len(got) > MaxDescriptionBytes || !strings.HasSuffix(got, cutMarker) || !strings.HasPrefix(got, "éé") {
		t.Fatalf("%d bytes, ends %q", len(got), got[len(got)-30:])
	}
}

func TestValidToolNameRule(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "dotted.name": true, "A-b_c.9": true, strings.Repeat("x", 128): true,
		"": false, strings.Repeat("x", 129): false, "sp ace": false, "slash/x": false, "é": false, "a\x1b": false,
	} {
		if ValidToolNameRule(name) != ok {
			t.Errorf("%q: want %v", name, ok)
		}
	}
}

func TestPromptArguments(t *testing.T) {
	p := Prompt{Name: "plan", Arguments: []PromptArgument{{Name: "goal", Required: true}, {Name: "status"}, {Name: "owner"}}}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"harden retry policy"}, "goal=harden retry policy"},
		{[]string{"status=paused"}, "status=paused"},
		{[]string{"status=paused", "ship it", "me"}, "goal=ship it owner=me status=paused"},
		{[]string{"a=b is a value"}, "goal=a=b is a value"},
		{[]string{"x", "y", "z", "w"}, "error"},
	} {
		got, err := PromptArguments(p, c.words)
		var parts []string
		for _, a := range []string{"goal", "owner", "status"} {
			if v, ok := got[a]; ok {
				parts = append(parts, a+"="+v)
			}
		}
		s := strings.Join(parts, " ")
		if err != nil {
			s = "error"
		}
		if s != c.want {
			t.Errorf("%q: got %q, want %q", c.words, s, c.want)
		}
	}
	if _, err := PromptArguments(p, []string{strings.Repeat("x", MaxArgumentBytes+1)}); err == nil {
		t.Error("over 256 KiB of arguments accepted")
	}
}

func TestCleanSchemaText(t *testing.T) {
	in := []byte(`{"type":"object","description":"a\u001b[31mb","properties":{"x":{"type":"string","title":"\u202et","enum":["\u001b"]}}}`)
	out := string(CleanSchemaText(in))
	if strings.Contains(out, `\u001b[31m`) || strings.Contains(out, "\u202e") || !strings.Contains(out, `"description":"ab"`) || !strings.Contains(out, `"enum":["\u001b"]`) {
		t.Fatalf("%s", out)
	}
	plain := []byte(`{"type":"object"}`)
	if string(CleanSchemaText(plain)) != string(plain) {
		t.Fatal("a clean schema was rewritten")
	}
}

func TestCleanCached(t *testing.T) {
	e := Entry{Tools: []Tool{{Name: "ok", Description: "a\x1b[2Jb"}, {Name: "bad name"}}, Instructions: "\u202ex"}
	got := CleanCached(e)
	if len(got.Tools) != 1 || got.Tools[0].Description != "ab" || got.Instructions != "x" {
		t.Fatalf("%+v", got)
	}
	if e.Tools[0].Description != "a\x1b[2Jb" {
		t.Fatal("the cached entry was changed in place")
	}
	clean := Entry{Tools: []Tool{{Name: "ok", Description: "fine"}}}
	if got := CleanCached(clean); &got.Tools[0] != &clean.Tools[0] {
		t.Fatal("a clean entry was copied")
	}
}
