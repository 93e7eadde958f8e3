package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestAddAndRemoveServerKeepComments(t *testing.T) {
	in := []byte("// mine\n{\n  \"mcpServers\": {\n    // keep me\n    \"a\": {\"command\": \"x\"}\n  }\n}\n")
	out, err := AddServer(in, "GitHub", map[string]any{"command": "npx", "args": []string{"-y", "pkg"}}, false)
	if err != nil || !strings.Contains(string(out), "// mine") || !strings.Contains(string(out), "// keep me") {
		t.Fatalf("%s %v", out, err)
	}
	f, issues, err := Parse(out, "x.json")
	if err != nil || len(issues) != 0 || f.MCPServers["GitHub"].Args[1] != "pkg" || f.MCPServers["a"].Command != "x" {
		t.Fatalf("%+v %v %v", f, issues, err)
	}
	if _, err := AddServer(out, "GitHub", map[string]any{"command": "y"}, false); !errors.Is(err, ErrServerExists) {
		t.Fatalf("an existing entry was replaced: %v", err)
	}
	if _, err := AddServer(out, "bad", map[string]any{"url": "ftp://x/"}, false); err == nil || !strings.Contains(err.Error(), "field url") {
		t.Fatalf("an invalid entry was written: %v", err)
	}
	out, removed, err := RemoveServer(out, "GitHub")
	if err != nil || !removed || strings.Contains(string(out), "GitHub") || !strings.Contains(string(out), "// keep me") {
		t.Fatalf("%s %v %v", out, removed, err)
	}
	// A plain JSON file (which other hosts read strictly) stays plain JSON.
	plain, err := AddServer([]byte(`{"mcpServers":{"a":{"command":"x"}}}`), "b", map[string]any{"url": "https://h/mcp"}, false)
	if err != nil || !json.Valid(plain) {
		t.Fatalf("%s %v", plain, err)
	}
	if plain, _, err = RemoveServer(plain, "a"); err != nil || !json.Valid(plain) || strings.Contains(string(plain), `"a"`) {
		t.Fatalf("%s %v", plain, err)
	}
}
