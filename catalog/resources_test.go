package catalog

import (
	"encoding/json"
	"strings"
	"testing"
)

func raws(items ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, s := range items {
		out[i] = json.RawMessage(s)
	}
	return out
}

func TestAdmitResources(t *testing.T) {
	rs, ts, dropped, err := AdmitResources(
		raws(`{"uri":"mem://a","name":"g\u001b[1m"}`, `{"uri":"https://u:p@h/x","name":"s"}`, `{"uri":"mem://b"}`),
		raws(`{"uriTemplate":"mem://d/{x}","name":"d"}`))
	if err != nil || len(rs) != 2 || rs[0].Name != "g" || rs[1].Name != "mem://b" || len(ts) != 1 || dropped != 1 {
		t.Fatalf("%+v %+v %d %v", rs, ts, dropped, err)
	}
	for _, c := range []struct {
		res, tmpl []json.RawMessage
		want      string
	}{
		{raws(`{"uri":"mem://a"}`, `{"uri":"mem://a"}`), nil, "resource 2 repeats the URI"},
		{raws(`{"name":"x"}`), nil, "resource 1 is not a JSON object with a uri"},
		{raws(`{"uri":"mem://a","description":"` + strings.Repeat("x", MaxResourceText+1) + `"}`), nil, "resource 1 has a field over 16 KiB"},
		{raws(`{"uri":"mem://a","mimeType":"` + strings.Repeat("x", 257) + `"}`), nil, "MIME type over 256 bytes"},
		{raws(`{"uri":"mem://a","annotations":{"audience":["user","assistant","x"]}}`), nil, "at most two audience hints"},
		{nil, raws(`{"uriTemplate":"mem://{x"}`), "not an RFC 6570 template"},
		{nil, raws(`{"uriTemplate":"mem://{x}"}`, `{"uriTemplate":"mem://{x}"}`), "repeats an earlier template"},
	} {
		if _, _, _, err := AdmitResources(c.res, c.tmpl); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	var many []string
	for i := 0; i <= MaxTemplateVars; i++ {
		many = append(many, "{v"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26))+"}")
	}
	if _, _, _, err := AdmitResources(nil, raws(`{"uriTemplate":"mem://`+strings.Join(many, "/")+`"}`)); err == nil || !strings.Contains(err.Error(), "variables, more than 100") {
		t.Errorf("101 variables: %v", err)
	}
}

func TestResourceToolNames(t *testing.T) {
	rs := []Resource{{URI: "mem://a", Name: "Guide"}, {URI: "mem://b", Name: "guide"}, {URI: "mem://c", Name: "other"}, {URI: "mem://d", Name: "x"}}
	names := ResourceToolNames(rs, map[string]bool{"read_x": true})
	if names[0] != "read_guide" || !strings.HasPrefix(names[1], "read_guide_") || len(names[1]) != len("read_guide_")+6 || names[2] != "read_other" || !strings.HasPrefix(names[3], "read_x_") {
		t.Fatalf("%v", names)
	}
	if again := ResourceToolNames(rs, map[string]bool{"read_x": true}); strings.Join(again, ",") != strings.Join(names, ",") {
		t.Fatal("not deterministic")
	}
}

func TestExpandTemplate(t *testing.T) {
	for _, c := range []struct {
		tmpl string
		args map[string]any
		want string
	}{
		{"mem://docs/{topic}{?lang}", map[string]any{"topic": "a b", "lang": "en"}, "mem://docs/a%20b?lang=en"},
		{"mem://f{/path*}", map[string]any{"path": []any{"x", "y"}}, "mem://f/x/y"},
		{"mem://q{?keys*}", map[string]any{"keys": map[string]any{"b": 2, "a": "1"}}, "mem://q?a=1&b=2"},
		{"mem://n/{n}", map[string]any{"n": 42}, "mem://n/42"},
		{"{+base}/x", map[string]any{"base": "https://u:p@h"}, "error"},
	} {
		got, err := ExpandTemplate(c.tmpl, c.args)
		if err != nil {
			got = "error"
		}
		if got != c.want {
			t.Errorf("%s %v: got %q, want %q", c.tmpl, c.args, got, c.want)
		}
	}
}

func TestHasUserinfo(t *testing.T) {
	for uri, want := range map[string]bool{"https://user:pw@host/x": true, "https://user@host": true, "mem://a": false, "file:///etc/x": false, "https://host/a@b": false} {
		if HasUserinfo(uri) != want {
			t.Errorf("%s: want %v", uri, want)
		}
	}
}

func TestAdmitPrompts(t *testing.T) {
	if ps, err := AdmitPrompts(raws(`{"name":"plan","description":"a\u001b[1mb","arguments":[{"name":"goal"}]}`)); err != nil || ps[0].Description != "ab" {
		t.Fatalf("%+v %v", ps, err)
	}
	args := make([]string, MaxPromptArguments+1)
	for i := range args {
		args[i] = `{"name":"a` + strings.Repeat("x", i) + `"}`
	}
	for _, c := range []struct{ item, want string }{
		{`{"name":"bad\u2028name"}`, "invalid name"},
		{`{"name":"` + strings.Repeat("n", 257) + `"}`, "invalid name"},
		{`{"name":"zw\u200bj"}`, "invalid name"},
		{`{"name":"p","arguments":[{"name":"a"},{"name":"a"}]}`, "invalid or repeated argument name"},
		{`{"name":"p","arguments":[` + strings.Join(args, ",") + `]}`, "declares 101 arguments"},
		{`[1]`, "not a JSON object"},
	} {
		if _, err := AdmitPrompts(raws(c.item)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60s: want %q, got %v", c.item, c.want, err)
		}
	}
}
