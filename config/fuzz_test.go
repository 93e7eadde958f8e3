package config

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSecret marks values the fuzzers plant; no diagnostic may repeat it.
const fuzzSecret = "SENTINEL"

var parseSeeds = []string{
	`{"mcpServers":{"a":{"command":"npx","args":["-y","x"],"env":{"K":"SENTINEL"}}}}`,
	`{"mcpServers":{"b":{"url":"https://u:SENTINEL@h/mcp?t=SENTINEL","headers":{"Authorization":"!echo SENTINEL"}}}}`,
	`{"mcpServers":{"c":{"socket":"~/s.sock","disabled":true,"lifecycle":"SENTINEL"}},"settings":{"idleTimeout":3}}`,
	`// comment
	{"mcpServers":{"d":{"command":"${SENTINEL:-x}","cwd":"$env:SENTINEL",},},"imports":["cursor","SENTINEL"],}`,
	`{"mcpServers":{"e":{"url":"https://h/","auth":"oauth","oauth":{"clientSecret":"!!SENTINEL","grantType":"SENTINEL"},"directTools":["SENTINEL"]}}}`,
	`{"mcpServers":{"f":{"command":"x","timeout":1,"requestTimeoutMs":2,"unknown":"SENTINEL"},"f":{"command":"y"}}}`,
	`{"mcpServers":{"g":{"url":"https://h/","bearerToken":"SENTINEL","bearerTokenEnv":"SENTINEL"}},"settings":{"output":{"maxLines":"SENTINEL"}}}`,
	`{"mcpServers":[]}`, `[]`, `{"mcpServers":{"h":null}}`, `{"mcpServers":{"i":{"env":{"SENTINEL=":"v"},"headers":{"Bad Header":"SENTINEL\n"}}}}`,
	`{"mcpServers":{"j":{"command":"x","directTools":true,"includeTools":["a*"],"exposeResources":false,"toolPrefix":"short"}}}`,
}

// namePattern is the rule ValidName implements by hand (the schema's
// propertyNames pattern in docs/mcp.schema.json).
var namePattern = regexp.MustCompile(`^[^#\p{Cc}\p{Cf}\p{Z}\x{FFFD}](?:(?:[^\p{Cc}\p{Cf}\p{Z}\x{FFFD}]| ){0,62}[^\p{Cc}\p{Cf}\p{Z}\x{FFFD}])?$`)

// FuzzValidName: ValidName agrees with namePattern.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"", "a", "A", "_a", "a_b-c.d", "9", "a b", "é", strings.Repeat("a", 64), strings.Repeat("a", 65),
		"a\n", "GitHub", "Context7", " a", "a ", "#a", "a#", "a\u202eb", "a\u200bb", "a\u00a0b", "a\u2028b", "\xff", "\ufffd",
		strings.Repeat("é", 64), strings.Repeat("é", 65), "a\x7fb", "a\u0085b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidName(name) != (utf8.ValidString(name) && namePattern.MatchString(name)) {
			t.Fatalf("ValidName(%q) = %v, the pattern says %v", name, ValidName(name), !ValidName(name))
		}
	})
}

// FuzzParseConfig: Parse never panics, a parsed file only holds servers
// that pass every check, and no diagnostic ever repeats a planted value.
func FuzzParseConfig(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, issues, err := Parse(data, "f.json")
		text := issuesText(issues)
		if err != nil {
			text += err.Error()
			if file.MCPServers != nil || issues != nil {
				t.Fatal("a failed parse returned servers or issues")
			}
		}
		for name, s := range file.MCPServers {
			if !namePattern.MatchString(name) || s.Name != name {
				t.Fatalf("bad name kept: %q", name)
			}
			if is := checkEntry(&s, "f.json", false); len(is) > 0 {
				t.Fatalf("entry kept that fails the whole-entry rules: %v", is)
			}
			ep := s.Endpoint()
			if ep.Kind() == 0 && ep.Problem == "" {
				t.Fatal("kept server has no endpoint and no problem")
			}
			_ = Show(&Effective{Servers: []Server{s}})
		}
		if len(file.Order) != len(file.MCPServers) {
			t.Fatal("order and servers disagree")
		}
		if strings.Contains(text, fuzzSecret) && !keyContains(data, fuzzSecret) {
			t.Fatalf("a diagnostic repeats a value:\n%s", text)
		}
		for _, s := range file.MCPServers {
			for _, shown := range Show(&Effective{Servers: []Server{s}}).Servers {
				for _, field := range []string{"env", "headers", "bearerToken"} {
					if v, ok := shown.Config[field]; ok && strings.Contains(toJSON(v), fuzzSecret) && !keyContains(data, fuzzSecret) {
						t.Fatalf("show repeats a secret of %s", field)
					}
				}
			}
		}
	})
}

// keyContains reports whether some object key of the (JSON with comments)
// document contains s: keys (field, header and variable names) may be
// named by diagnostics, values may not.
func keyContains(data []byte, s string) bool {
	std, err := standardize(data, "")
	if err != nil {
		return bytes.Contains(data, []byte(s)) // cannot tell keys from values
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	var stack []bool // true: inside an object, expecting a key
	for {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch v := t.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, true)
			case '[':
				stack = append(stack, false)
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if len(stack) > 0 && stack[len(stack)-1] && strings.Contains(v, s) {
				return true
			}
		}
		if len(stack) > 0 && stack[len(stack)-1] {
			// The token after a key is its value: skip it.
			if err := skipValue(dec); err != nil {
				return false
			}
		}
	}
}

func skipValue(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// FuzzInterpolate: the template parser never panics, agrees with its
// checker, leaves text without '$' alone, and escaping round-trips.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"", "plain", "${A}", "${A:-d}", "$env:A", "${env:A}", "$$", "${", "${A", "${}", "$env:", "a$b${c}d$$e", "${A:-}}", "~/${A}/x", "!${A}", "$${A}"} {
		f.Add(s, "A", "value")
	}
	f.Fuzz(func(t *testing.T, s, name, value string) {
		lookup := func(k string) (string, bool) { return value, k == name }
		out, missing, err := expand(s, lookup)
		if (err != nil) != (checkTemplate(s) != nil) {
			t.Fatalf("expand and checkTemplate disagree on %q", s)
		}
		if err == nil && !strings.Contains(s, "$") && (out != s || missing) {
			t.Fatalf("text without $ changed: %q -> %q", s, out)
		}
		if err != nil && (out != "" || missing) {
			t.Fatal("a malformed template produced output")
		}
		back, missing, err := expand(escapeDollars(s), lookup)
		if err != nil || missing || back != s {
			t.Fatalf("escape round trip of %q: %q %v %v", s, back, missing, err)
		}
		if err == nil {
			_ = placeholder(s)
			_ = hasRefs(s)
		}
	})
}
