package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// cfgEnv is a user for the configuration commands: a home directory, an
// agent dir, a project directory and a temporary directory, all fresh.
type cfgEnv struct {
	home, agent, work, tmp string
	vars                   []string
}

func newCfgEnv(t *testing.T) *cfgEnv {
	home := t.TempDir()
	e := &cfgEnv{home: home, agent: filepath.Join(home, ".mcprt", "agent"), work: filepath.Join(home, "proj"), tmp: t.TempDir()}
	if err := os.MkdirAll(e.work, 0o700); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *cfgEnv) write(t *testing.T, rel, content string) string {
	t.Helper()
	path := rel
	if !filepath.IsAbs(rel) {
		path = filepath.Join(e.home, rel)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs the CLI in the project directory as this user.
func (e *cfgEnv) run(t *testing.T, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Dir = e.work
	cmd.Env = append(os.Environ(), "HOME="+e.home, "MCPRT_AGENT_DIR="+e.agent, "TMPDIR="+e.tmp, "XDG_CONFIG_HOME=", "CODEX_HOME=")
	cmd.Env = append(cmd.Env, e.vars...)
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	o := outcome{stdout: so.String(), stderr: se.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		o.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return o
}

func TestConfigShowProvenance(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	global := e.write(t, ".config/mcp/mcp.json", `{"mcpServers":{"srv":{"command":"global-cmd","args":["--g"],"idleTimeout":3,"env":{"TOKEN":"${MY_TOKEN}"}}},"settings":{"toolPrefix":"short"}}`)
	project := e.write(t, filepath.Join(e.work, ".mcp.json"), `{"mcpServers":{"srv":{"args":["--p"]},"web":{"url":"https://h.example/mcp?key=abc","bearerToken":"!pass show x"}}}`)
	o := e.run(t, "config", "show", "--json")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	var shown struct {
		Sources []struct {
			Path  string `json:"path"`
			Scope string `json:"scope"`
			Found bool   `json:"found"`
		} `json:"sources"`
		Servers []struct {
			Name    string            `json:"name"`
			Config  map[string]any    `json:"config"`
			Sources map[string]string `json:"sources"`
			Problem string            `json:"problem"`
		} `json:"servers"`
		SettingsSources map[string]string `json:"settingsSources"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &shown); err != nil {
		t.Fatalf("%v: %s", err, o.stdout)
	}
	if len(shown.Sources) != 6 || !shown.Sources[0].Found || shown.Sources[5].Scope != "project-override" || shown.Sources[5].Found {
		t.Fatalf("sources %+v", shown.Sources)
	}
	srv, web := shown.Servers[0], shown.Servers[1]
	if srv.Config["command"] != "global-cmd" || srv.Sources["command"] != global || srv.Sources["args"] != project || srv.Config["idleTimeout"] != 3.0 {
		t.Fatalf("srv %+v", srv)
	}
	if env := srv.Config["env"].(map[string]any); env["TOKEN"] != "<secret>" || !strings.HasPrefix(srv.Problem, "field env: uses an environment variable") {
		t.Fatalf("env %v, problem %q", env, srv.Problem)
	}
	if web.Config["url"] != "https://h.example/mcp?<secret>" || web.Config["bearerToken"] != "<secret from a command>" {
		t.Fatalf("web %+v", web)
	}
	if shown.SettingsSources["toolPrefix"] != global {
		t.Fatalf("settings sources %v", shown.SettingsSources)
	}
	o = e.run(t, "config", "show")
	for _, want := range []string{"✓ " + global + " (user)", "· " + filepath.Join(e.work, ".mcprt", "mcp.json") + " (project-override, not found)",
		`["--p"]  ← ` + project, "cannot connect: field env:", `bearerToken  "<secret from a command>"`} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("config show lacks %q:\n%s", want, o.stdout)
		}
	}
	if strings.Contains(o.stderr+o.stdout, "MY_TOKEN") {
		t.Fatal("a variable name was shown")
	}
}

func TestEnableDisableWriteOnlyTheOverride(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	globalDoc := `{"mcpServers":{"g":{"command":"x","env":{"T":"secret-value"}},"off":{"command":"y","disabled":true}}}`
	global := e.write(t, ".config/mcp/mcp.json", globalDoc)
	override := filepath.Join(e.work, ".mcprt", "mcp.json")
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"disable", "g"}, `"g": {"disabled": true}`},
		{[]string{"enable", "g"}, `{}`},
		{[]string{"enable", "off"}, `"off": {"disabled": false}`},
	} {
		o := e.run(t, step.args...)
		if o.code != 0 || !strings.Contains(o.stdout, "d "+step.args[1]+" in "+override) {
			t.Fatalf("%v: exit %d %q %q", step.args, o.code, o.stdout, o.stderr)
		}
		got, _ := os.ReadFile(override)
		if !strings.Contains(strings.Join(strings.Fields(string(got)), " "), step.want) {
			t.Fatalf("%v: override is\n%s", step.args, got)
		}
	}
	if got, _ := os.ReadFile(global); string(got) != globalDoc {
		t.Fatal("the global file was rewritten")
	}
	o := e.run(t, "status")
	if !strings.Contains(o.stdout, "○ g (not connected)") || !strings.Contains(o.stdout, "○ off (not connected)") {
		t.Fatalf("status %q %q", o.stdout, o.stderr)
	}
	e.run(t, "disable", "g")
	if o := e.run(t, "status"); !strings.Contains(o.stdout, "⊘ g (disabled)") {
		t.Fatalf("status after disable: %q", o.stdout)
	}
	if o := e.run(t, "disable", "nope"); o.code != 2 || !strings.Contains(o.stderr, `no server named "nope"`) {
		t.Fatalf("unknown server: %d %q", o.code, o.stderr)
	}
	if o := e.run(t, "disable", "g", "--config", global); o.code != 2 || !strings.Contains(o.stderr, "project override") {
		t.Fatalf("--config: %d %q", o.code, o.stderr)
	}
}

func TestConfigDetect(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t)
	e.write(t, ".cursor/mcp.json", `{"mcpServers":{"Linear":{"url":"https://mcp.linear.app/sse"},"gh":{"command":"x"}}}`)
	e.write(t, filepath.Join(e.work, ".mcp.json"), `{"mcpServers":{"gh":{"command":"y"}}}`)
	agentFile := e.write(t, filepath.Join(e.agent, "mcp.json"), "{\n  // keep me\n  \"settings\": {\"idleTimeout\": 2}\n}\n")
	o := e.run(t, "config", "detect")
	if o.code != 0 || !strings.Contains(o.stdout, "cursor (not imported):") || !strings.Contains(o.stdout, "would add Linear; already configured: gh") ||
		!strings.Contains(o.stdout, "config detect --write") {
		t.Fatalf("detect: %d %q %q", o.code, o.stdout, o.stderr)
	}
	if got, _ := os.ReadFile(agentFile); !strings.Contains(string(got), "keep me") || strings.Contains(string(got), "imports") {
		t.Fatal("detect without --write wrote")
	}
	o = e.run(t, "config", "detect", "--write")
	got, _ := os.ReadFile(agentFile)
	if o.code != 0 || !strings.Contains(strings.Join(strings.Fields(string(got)), " "), `"imports": ["cursor"]`) || !strings.Contains(string(got), "keep me") {
		t.Fatalf("detect --write: %d %q\n%s", o.code, o.stderr, got)
	}
	if o := e.run(t, "status"); !strings.Contains(o.stdout, "Linear") {
		t.Fatalf("imported server not in status: %q %q", o.stdout, o.stderr)
	}
	if o := e.run(t, "config", "detect", "--write"); !strings.Contains(o.stdout, "Nothing to write") {
		t.Fatalf("second --write: %q", o.stdout)
	}
}

// TestNoSecretInAnyOutput fills every field of invalid entries, and every
// secret-bearing field of valid ones (literally, through ${VAR} and through
// !command), with a sentinel; runs every command against them, connecting
// real stdio and HTTP servers that use the secrets; and looks for the
// sentinel in every output, exit message, and every file under the home,
// agent and temporary directories (cache and spill files included).
func TestNoSecretInAnyOutput(t *testing.T) {
	t.Parallel()
	const S = "SENTINEL-c0nf1g"
	e := newCfgEnv(t)
	e.vars = append(e.vars, "SECRET_VAR="+S)
	stdioEnv := map[string]string{"LIT": S, "VIA_VAR": "${SECRET_VAR}", "VIA_CMD": "!printf %s " + S, "ESC": "!!" + S}
	for k, v := range testenv.TestServerEnv("--stdio") {
		stdioEnv[k] = v
	}
	httpURL, _ := testenv.StartTestServer(t, "--http 127.0.0.1:0")
	valid := map[string]any{
		"stdio": map[string]any{"command": testenv.Self(t), "env": stdioEnv},
		"web": map[string]any{"url": httpURL + "?token=" + S, "headers": map[string]string{"X-Lit": S, "X-Var": "Bearer ${SECRET_VAR}", "X-Cmd": "!echo " + S},
			"bearerToken": "!printf " + S},
		"web2":     map[string]any{"url": httpURL, "bearerTokenEnv": "SECRET_VAR", "auth": "bearer"},
		"oauthsrv": map[string]any{"url": "http://127.0.0.1:1/mcp", "auth": "oauth", "oauth": map[string]any{"clientId": "c", "clientSecret": S}},
		"missing":  map[string]any{"url": "https://${UNSET_" + strings.ReplaceAll(S, "-", "_") + "}/mcp"},
	}
	invalid := map[string]any{}
	for i, fields := range []map[string]any{
		{"command": "/nonexistent/" + S, "args": []string{S}, "env": map[string]string{"K": S}, "cwd": "/" + S, "lifecycle": S, "idleTimeout": S,
			"requestTimeoutMs": S, "startupTimeoutMs": S, "catalogTimeoutMs": S, "protocolVersion": S, "debug": S, "disabled": S, "description": 5, "type": S},
		{"url": "https://user:" + S + "@h.example/mcp#" + S, "headers": map[string]string{"Authorization": S + "\n"}, "auth": S, "bearerToken": "!",
			"bearerTokenEnv": S, "oauth": map[string]any{"grantType": S, "clientSecret": S, "redirectUri": "https://" + S, "clientUri": S, "x": S}},
		{"socket": S, "directTools": S, "toolPrefix": S, "includeTools": S, "excludeTools": 7, "exposeResources": S, "searchKeywords": S, "timeout": S},
		{"command": "${" + S, "args": []string{"${" + S + ":-x"}, "url": "https://${" + S + "}/"},
	} {
		invalid["bad"+itoa(i)] = fields
	}
	doc := func(servers map[string]any) string {
		b, _ := json.Marshal(map[string]any{"mcpServers": servers})
		return string(b)
	}
	all := map[string]any{}
	for k, v := range valid {
		all[k] = v
	}
	for k, v := range invalid {
		all[k] = v
	}
	files := map[string]string{
		"valid.json":    doc(valid),
		"invalid.json":  strings.Replace(doc(invalid), `{"mcpServers":{`, `{"mcpServers":{"d\u0007`+S+`":{"command":"x"},"\u001b`+S+`":{"command":"x"},`, 1),
		"broken.json":   `{"mcpServers":{"x":{"command":"` + S + `",}`,
		"toolarge.json": `{"mcpServers":{"x":{"command":"` + S + strings.Repeat(" ", 300<<10) + `"}}}`,
	}
	// The standard files and a host import carry secrets too.
	e.write(t, ".config/mcp/mcp.json", doc(all))
	e.write(t, filepath.Join(e.agent, "mcp.json"), `{"imports":["codex","cursor"]}`)
	e.write(t, ".codex/config.toml", "[mcp_servers.cx]\nurl = \"https://h.example/mcp\"\nbearer_token = \""+S+"\"\nhttp_headers = { \"X\" = \""+S+"\" }\n")
	e.write(t, ".cursor/mcp.json", `{"mcpServers":{"cu":{"command":"x","env":{"K":"`+S+`"},"alwaysAllow":["`+S+`"]},"bad\n`+S+`":{"command":"x"}}}`)
	commands := [][]string{{"status"}, {"status", "--json"}, {"list"}, {"list", "stdio"}, {"list", "web"}, {"list", "web2"}, {"list", "missing"},
		{"list", "oauthsrv"}, {"call", "echo", `{"message":"hi"}`}, {"call", "no_such_tool", "{}"}, {"connect", "web"}, {"config", "show"},
		{"config", "show", "--json"}, {"config", "detect"}, {"config", "detect", "--json"}, {"disable", "stdio"}, {"enable", "stdio"},
		{"list", "bad0"}, {"disable", "d\a" + S}}
	var out strings.Builder
	check := func(args []string, o outcome) {
		out.WriteString(o.stdout + o.stderr) // the outputs only: the command line itself holds the sentinel
		if strings.Contains(o.stderr, "panic") {
			t.Errorf("%v crashed: %s", args, o.stderr)
		}
	}
	for _, c := range commands {
		check(c, e.run(t, c...))
	}
	for name, content := range files {
		path := e.write(t, filepath.Join(e.tmp, "cfg", name), content)
		for _, c := range commands {
			check(c, e.run(t, append(c, "--config", path)...))
		}
	}
	if o := e.run(t, "list", "stdio"); o.code != 0 || !strings.Contains(o.stdout, "echo") {
		t.Fatalf("the stdio server with secrets did not work: %q %q", o.stdout, o.stderr)
	}
	webOnly := e.write(t, filepath.Join(e.tmp, "cfg", "web.json"), doc(map[string]any{"web": valid["web"]}))
	if o := e.run(t, "call", "header", `{"name":"X-Cmd"}`, "--config", webOnly); !strings.Contains(o.stdout, S) {
		// The server's own answer may contain the secret (it is the
		// server's output, not ours): this proves the secret was used.
		t.Fatalf("the command-sourced header did not reach the server: %q %q", o.stdout, o.stderr)
	}
	text := out.String()
	if strings.Contains(text, S) {
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, S) {
				t.Errorf("sentinel in output: %.200s", line)
				break
			}
		}
	}
	// Every file the runtime may have written: caches, overrides, spills.
	scanned := map[string]int{}
	for _, dir := range []string{e.agent, filepath.Join(e.work, ".mcprt"), e.tmp} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(p, filepath.Join(e.tmp, "cfg")) || p == filepath.Join(e.agent, "mcp.json") {
				return nil
			}
			scanned[dir]++
			if b, _ := os.ReadFile(p); strings.Contains(string(b), S) {
				t.Errorf("sentinel in %s", p)
			}
			return nil
		})
	}
	if scanned[e.agent] == 0 || scanned[filepath.Join(e.work, ".mcprt")] == 0 {
		t.Fatalf("no metadata cache or override was written, so none was checked: %v", scanned)
	}
	if !strings.Contains(text, "invalid server name") || !strings.Contains(text, "<secret>") || !strings.Contains(text, "field url: uses an environment variable") {
		t.Fatalf("the commands did not run as expected:\n%.3000s", text)
	}
}
