package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../docs/mcp.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mcp.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mcp.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func instance(t *testing.T, data []byte) any {
	t.Helper()
	std, err := standardize(data, "example")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(std))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fence matches a fenced JSON block of Markdown.
var fence = regexp.MustCompile("(?s)```(json|jsonc)\n(.*?)```")

// TestDocExamplesMatchTheSchema validates every configuration example of
// docs/ and the README against docs/mcp.schema.json, and checks that
// mcprt itself accepts it. An example whose first line is
// "// invalid: ..." shows an error on purpose and must fail both.
func TestDocExamplesMatchTheSchema(t *testing.T) {
	sch := compileSchema(t)
	docs, _ := filepath.Glob("../docs/*.md")
	docs = append(docs, "../README.md")
	examples := 0
	for _, path := range docs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range fence.FindAllSubmatch(data, -1) {
			block := m[2]
			std, err := standardize(block, path)
			if err != nil {
				continue // not a document (a fragment of one)
			}
			var root map[string]json.RawMessage
			if json.Unmarshal(std, &root) != nil || (root["mcpServers"] == nil && root["settings"] == nil && root["imports"] == nil) {
				continue // not a configuration file
			}
			examples++
			invalid := bytes.HasPrefix(bytes.TrimSpace(block), []byte("// invalid"))
			schemaErr := sch.Validate(instance(t, block))
			_, issues, parseErr := Parse(block, "example.json")
			accepted := parseErr == nil && len(issues) == 0
			switch {
			case invalid && (schemaErr == nil || accepted):
				t.Errorf("%s example %d is marked invalid but schema error %v, accepted %v", path, i+1, schemaErr, accepted)
			case !invalid && schemaErr != nil:
				t.Errorf("%s example %d does not match the schema: %v\n%s", path, i+1, schemaErr, block)
			case !invalid && parseErr != nil:
				t.Errorf("%s example %d is refused: %v", path, i+1, parseErr)
			case !invalid && !partialOK(issues):
				t.Errorf("%s example %d has issues:\n%s", path, i+1, issuesText(issues))
			}
		}
	}
	if examples < 10 {
		t.Fatalf("only %d configuration examples found in docs/ and README.md", examples)
	}
}

// partialOK accepts the issues a partial override entry has on its own
// (it needs the lower files' endpoint).
func partialOK(issues []Issue) bool {
	for _, is := range issues {
		if !strings.Contains(is.Message, "exactly one of command, url and socket") && !strings.Contains(is.Message, "only apply to command servers") {
			return false
		}
	}
	return true
}

// TestSchemaAgreesWithTheParser spot-checks that the schema and Parse
// accept and refuse the same entries.
func TestSchemaAgreesWithTheParser(t *testing.T) {
	sch := compileSchema(t)
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{`{"mcpServers":{"a":{"command":"x","args":["y"],"env":{"K":"!cmd"}}}}`, true},
		{`{"mcpServers":{"a":{"url":"https://h/mcp","bearerTokenEnv":"TOK","timeout":5}}}`, true},
		{`{"mcpServers":{"a":{"socket":"~/s.sock","lifecycle":"keep-alive"}},"imports":["codex"]}`, true},
		{`{"mcpServers":{"GitHub":{"command":"x"},"my server":{"command":"x"},"@scope/pkg":{"command":"x"}}}`, true},
		{`{"mcpServers":{"a\u0007b":{"command":"x"}}}`, false},
		{`{"mcpServers":{" a":{"command":"x"}}}`, false},
		{`{"mcpServers":{"#1":{"command":"x"}}}`, false},
		{`{"mcpServers":{"a\u202eb":{"command":"x"}}}`, false},
		{`{"mcpServers":{"a":{"command":"x","url":"https://h/"}}}`, false},
		{`{"mcpServers":{"a":{"command":"x","bogus":1}}}`, false},
		{`{"mcpServers":{"a":{"command":"x","timeout":1,"requestTimeoutMs":2}}}`, false},
		{`{"mcpServers":{"a":{"url":"https://h/","oauth":{"redirectUri":"https://evil/cb"}}}}`, false},
		{`{"mcpServers":{"a":{"command":"x","lifecycle":"sometimes"}}}`, false},
		{`{"mcpServers":{"a":{"command":"x","disabled":"true"}}}`, false},
		{`{"mcpServers":{"a":{"command":"x","requestTimeoutMs":0,"trace":true}}}`, true},
		{`{"mcpServers":{"a":{"command":"x","requestTimeoutMs":1e3,"startupTimeoutMs":5000.0,"timeout":null}}}`, false},
		{`{"mcpServers":{"a":{"command":"x","requestTimeoutMs":1e3,"startupTimeoutMs":5000.0}}}`, true},
		{`{"mcpServers":{"a":{"command":"x","requestTimeoutMs":0.0}},"settings":{"requestTimeoutMs":6e4,"npxInstallTimeoutMs":3e5}}`, true},
		{`{"mcpServers":{"a":{"command":"x","requestTimeoutMs":1.5}}}`, false},
		{`{"mcpServers":{"a":{"command":"x","catalogTimeoutMs":2.5e3}}}`, true},
		{`{"mcpServers":{"a":{"url":"https://h/","auth":"oauth","oauth":{"authorizationParams":{"prompt":"consent"}}}}}`, true},
		{`{"mcpServers":{"a":{"url":"https://h/","auth":"oauth","oauth":{"authorizationParams":{"state":"x"}}}}}`, false},
		{`{"imports":["emacs"]}`, false},
	} {
		schemaOK := sch.Validate(instance(t, []byte(tc.doc))) == nil
		_, issues, err := Parse([]byte(tc.doc), "x.json")
		parseOK := err == nil && len(issues) == 0
		if schemaOK != tc.ok || parseOK != tc.ok {
			t.Errorf("%s: schema %v, parser %v, want %v (%s)", tc.doc, schemaOK, parseOK, tc.ok, issuesText(issues))
		}
	}
}
