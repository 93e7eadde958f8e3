package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testkit"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// noJSON are the commands without a --json form: the groups, the demo (a
// tour for people, which refuses --json), the completion scripts, the
// sidecar (its JSON lines are docs/sidecar.schema.json's, checked by
// session_test.go), the shared runtime's member (serve: it runs until
// stopped and prints one line for people), and the interactive OAuth
// commands.
var noJSON = map[string]bool{"runtime": true, "runtime config": true, "runtime events": true, "runtime demo": true,
	"runtime completion": true, "runtime completion bash": true, "runtime completion zsh": true, "runtime completion fish": true,
	"runtime completion powershell": true, "runtime session": true, "runtime serve": true,
	// The browser login and the logout talk to a person; auth status has --json.
	"runtime auth": true, "runtime auth login": true, "runtime auth logout": true}

// schemaFile is the JSON Schema of a command's --json output in docs/json.
func schemaFile(path string) string {
	return strings.ReplaceAll(strings.TrimPrefix(path, "runtime "), " ", "-") + ".schema.json"
}

// jsonSchemas compiles every schema of docs/json.
func jsonSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	files, err := filepath.Glob("../../docs/json/*.schema.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in docs/json: %v", err)
	}
	c := jsonschema.NewCompiler()
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource(filepath.Base(f), doc); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, f := range files {
		sch, err := c.Compile(filepath.Base(f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = sch
	}
	return out
}

var camel = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// opaque are the members whose keys are data (a server's schemas and
// arguments, configuration field and setting names), not the CLI's format.
var opaque = map[string]bool{"inputSchema": true, "outputSchema": true, "payloadSchema": true, "arguments": true,
	"structuredContent": true, "data": true, "_meta": true, "config": true, "settings": true, "sources": true, "settingsSources": true, "properties": true}

// camelKeys reports every object key of v outside the opaque members that
// is not camelCase.
func camelKeys(v any, at string, bad *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if !camel.MatchString(k) && k != "_meta" { // MCP's own member
				*bad = append(*bad, at+"."+k)
			}
			if !opaque[k] {
				camelKeys(child, at+"."+k, bad)
			}
		}
	case []any:
		for _, child := range x {
			camelKeys(child, at+"[]", bad)
		}
	}
}

// Every property a schema in docs/json declares is camelCase, and every
// command with a --json form has its schema.
func TestEveryCommandHasACamelCaseJSONSchema(t *testing.T) {
	t.Parallel()
	schemas := jsonSchemas(t)
	for _, p := range commandPaths(newRoot(&globals{stdout: io.Discard, stderr: io.Discard})) {
		if _, ok := schemas[schemaFile(p)]; !ok && !noJSON[p] {
			t.Errorf("%s has no docs/json/%s", p, schemaFile(p))
		}
	}
	files, _ := filepath.Glob("../../docs/json/*.schema.json")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if props, ok := x["properties"].(map[string]any); ok {
					for k := range props {
						if !camel.MatchString(k) && k != "_meta" { // MCP's own member
							t.Errorf("%s: property %q is not camelCase", f, k)
						}
					}
				}
				for _, c := range x {
					walk(c)
				}
			case []any:
				for _, c := range x {
					walk(c)
				}
			}
		}
		walk(doc)
	}
}

// Every command's --json output is valid against its schema and uses
// camelCase keys; events subscribe prints JSON lines only.
func TestJSONOutputMatchesTheSchemas(t *testing.T) {
	t.Parallel()
	schemas := jsonSchemas(t)
	home, agent, root := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "MCPRT_AGENT_DIR=" + agent}
	servers := filepath.Join(t.TempDir(), "servers.json")
	writeFile(t, servers, compact(map[string]any{"mcpServers": map[string]any{
		"adhoc": map[string]any{"command": binary(t), "args": []string{"demo-server", "--root", root}},
		"every": map[string]any{"command": testenv.Node(t), "args": []string{testenv.EverythingJS(t)}},
	}}))
	demo := servers
	writeFile(t, filepath.Join(home, ".config", "mcp", "mcp.json"), `{"mcpServers":{"GitHub":{"command":"x","env":{"T":"secret"}}}}`)
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers":{"linear":{"url":"https://mcp.linear.app/sse"}}}`)
	check := func(schema string, out string) {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%s: not JSON: %v\n%s", schema, err, out)
			return
		}
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(out))
		if err := schemas[schema].Validate(inst); err != nil {
			t.Errorf("%s: %v\n%s", schema, err, out)
		}
		var bad []string
		camelKeys(v, "", &bad)
		if len(bad) > 0 {
			t.Errorf("%s: keys not camelCase: %v", schema, bad)
		}
	}
	for _, c := range []struct {
		schema string
		args   []string
	}{
		{"connect", []string{"connect", "adhoc", "--config", demo}},
		{"status", []string{"status", "--config", demo}},
		{"list", []string{"list", "adhoc", "--config", demo}},
		{"call", []string{"call", "adhoc_echo", `{"message":"<hi>"}`, "--config", demo}},
		{"call", []string{"call", "no_such_tool", "--config", demo}},
		{"tool", []string{"tool", "mcp", `{"server":"adhoc"}`, "--config", demo}},
		{"search", []string{"search", "echo", "--config", demo}},
		{"describe", []string{"describe", "adhoc_echo", "--config", demo}},
		{"instructions", []string{"instructions", "adhoc", "--config", demo}},
		{"events-catalog", []string{"events", "catalog", "adhoc", "--config", demo}},
		{"config-show", []string{"config", "show"}},
		{"config-detect", []string{"config", "detect"}},
		{"config-add", []string{"config", "add", "new", "--scope", "user", "--", "true"}},
		{"config-remove", []string{"config", "remove", "new"}},
		{"disable", []string{"disable", "GitHub"}},
		{"enable", []string{"enable", "GitHub"}},
		{"connect", []string{"connect", "every", "--config", demo}},
		{"prompts", []string{"prompts", "--config", demo}},
		{"prompt", []string{"prompt", "every", "simple-prompt", "--config", demo}},
		{"resources", []string{"resources", "every", "--config", demo}},
		{"read", []string{"read", "demo://resource/static/document/features.md", "--server", "every", "--config", demo}},
	} {
		o := runCLI(t, env, append([]string{"--json"}, c.args...)...)
		if o.code != 0 && !(c.args[1] == "no_such_tool" && o.code == 1) {
			t.Errorf("%v: exit %d, stderr %q", c.args, o.code, o.stderr)
			continue
		}
		check(c.schema+".schema.json", o.stdout)
		if c.schema == "prompts" && !strings.Contains(o.stdout, `"server": "every"`) {
			t.Errorf("prompts: the cached prompts are missing:\n%s", o.stdout)
		}
		if c.schema == "resources" && (!strings.Contains(o.stdout, `"uri": "demo://resource/static/document/features.md"`) || !strings.Contains(o.stdout, `"uriTemplate"`)) {
			t.Errorf("resources: the resources or templates are missing:\n%s", o.stdout)
		}
		if c.schema == "read" && !strings.Contains(o.stdout, "Everything Server - Features") {
			t.Errorf("read: not the resource's text:\n%s", o.stdout)
		}
	}
	// Streaming: JSON lines only, the acknowledgement first.
	o := runCLI(t, env, "events", "subscribe", "adhoc", "clock.tick", `{"seconds":1}`, "--for", "2500ms", "--json", "--config", demo)
	lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	if o.code != 0 || len(lines) < 2 || !strings.HasPrefix(lines[0], `{"type":"subscribed"`) {
		t.Fatalf("events subscribe --json: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	for _, l := range lines {
		check("events-subscribe.schema.json", l)
	}
	// demo-server --http: one line once it listens.
	ctx := testkit.Ctx(t) // a hang guard only
	srv := exec.CommandContext(ctx, binary(t), "demo-server", "--http", "127.0.0.1:0", "--root", root, "--json")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	check("demo-server.schema.json", string(bytes.TrimSpace(line)))
	// The demo refuses --json rather than printing a tour.
	if o := runCLI(t, nil, "demo", "--json"); o.code != exitUsage {
		t.Fatalf("demo --json: exit %d", o.code)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
