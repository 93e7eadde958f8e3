package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetDisabledKeepsEverythingElse(t *testing.T) {
	in := `{
  // my override
  "mcpServers": {
    "a": {"args": ["x"]}, // trailing
  },
  "settings": {"idleTimeout": 3},
}`
	out, err := SetDisabled([]byte(in), "a", ptr(true))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"// my override", "// trailing", `"args": ["x"]`, `"disabled": true`, `"idleTimeout": 3`} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("missing %q in\n%s", want, out)
		}
	}
	f, issues, err := Parse(out, "o.json")
	if err != nil || len(issues) != 2 || f.Settings.IdleTimeout == nil { // a is not complete on its own
		t.Fatalf("%v %v", issues, err)
	}
	out, err = SetDisabled(out, "b", ptr(false))
	if err != nil || !strings.Contains(string(out), `"b": {"disabled": false}`) {
		t.Fatalf("%s %v", out, err)
	}
	out, err = SetDisabled(out, "b", nil)
	if err != nil || strings.Contains(string(out), `"b"`) {
		t.Fatalf("an emptied entry stays: %s %v", out, err)
	}
	out, err = SetDisabled(out, "a", nil)
	if err != nil || strings.Contains(string(out), "disabled") || !strings.Contains(string(out), `"args"`) {
		t.Fatalf("%s %v", out, err)
	}
	if out, err := SetDisabled(nil, "new", ptr(true)); err != nil || !strings.Contains(string(out), `"new": {"disabled": true}`) {
		t.Fatalf("empty file: %s %v", out, err)
	}
	for _, bad := range []string{`{"mcpServers": `, `[1]`, `{"mcpServers": []}`, `{"mcpServers": {"a": 3}}`} {
		if _, err := SetDisabled([]byte(bad), "a", ptr(true)); !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: a broken file would be overwritten: %v", bad, err)
		}
	}
	if _, err := SetDisabled(nil, "Bad\nName", ptr(true)); err == nil {
		t.Fatal("an invalid name was accepted")
	}
}

func TestPlanToggle(t *testing.T) {
	w := newWorld(t)
	files := w.files()
	global := `{"mcpServers":{"g":{"command":"x"},"off":{"command":"y","disabled":true}}}`
	write(t, files[0], global)
	project := `{"mcpServers":{"p":{"url":"https://h/mcp","headers":{"X":"` + sentinel + `"}}}}`
	write(t, files[4], project)
	apply := func(name string, disable bool) string {
		t.Helper()
		cur, _ := os.ReadFile(files[5])
		path, data, err := PlanToggle(w.src(), cur, name, disable)
		if err != nil {
			t.Fatal(err)
		}
		if path != files[5] {
			t.Fatalf("wrote %s, not the project override", path)
		}
		write(t, path, string(data))
		return string(data)
	}
	disabled := func(name string) bool {
		s, ok := w.load(t).Server(name)
		if !ok {
			t.Fatalf("%s vanished", name)
		}
		return s.Disabled
	}
	apply("p", true)
	apply("g", true)
	if !disabled("p") || !disabled("g") {
		t.Fatal("disable did not disable")
	}
	out := apply("p", false)
	if disabled("p") || strings.Contains(out, `"p"`) {
		t.Fatalf("enable of a server lower files leave enabled must remove the flag:\n%s", out)
	}
	out = apply("off", false)
	if disabled("off") || !strings.Contains(out, `"off": {"disabled": false}`) {
		t.Fatalf("enable of a server a lower file disables must write false:\n%s", out)
	}
	if strings.Contains(out, sentinel) || strings.Contains(out, "command") || strings.Contains(out, "url") {
		t.Fatalf("the override got more than disabled fields:\n%s", out)
	}
	for path, want := range map[string]string{files[0]: global, files[4]: project} {
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Fatalf("%s was rewritten", path)
		}
	}
	if _, _, err := PlanToggle(w.src(), nil, "nope", true); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("unknown server: %v", err)
	}
	src := w.src()
	src.Path = files[0]
	if _, _, err := PlanToggle(src, nil, "g", true); !errors.Is(err, ErrNotFromFiles) {
		t.Fatalf("--config: %v", err)
	}
}

func TestDetectAndPlanImports(t *testing.T) {
	w := hostWorld(t, "codex")
	write(t, filepath.Join(w.agent, "mcp.json"), "// mine\n{\"settings\": {\"idleTimeout\": 2}}\n")
	write(t, filepath.Join(w.work, ".mcp.json"), `{"mcpServers":{"figma":{"url":"https://f/mcp"}}}`)
	write(t, filepath.Join(w.home, ".cursor", "mcp.json"), `{"mcpServers":{"Broken"`)
	write(t, filepath.Join(w.home, ".claude.json"), `{"projects":{"/elsewhere":{"mcpServers":{"x":{"command":"x"}}}}}`)
	reports, err := Detect(w.src())
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]HostReport{}
	for _, r := range reports {
		byKind[r.Kind] = r
	}
	codex := byKind["codex"]
	if len(codex.Files) != 2 || codex.Imported || !codex.Adds() {
		t.Fatalf("codex %+v", codex)
	}
	if got := strings.Join(codex.Files[0].New, ","); got != "context7,linear" || strings.Join(codex.Files[0].Present, ",") != "figma" {
		t.Fatalf("codex user file %+v", codex.Files[0])
	}
	if c := byKind["cursor"]; len(c.Files) != 1 || c.Files[0].Problem == "" || c.Adds() {
		t.Fatalf("cursor %+v", c)
	}
	if c := byKind["claude-code"]; len(c.Files) != 1 || c.Files[0].Scope != "" || c.Adds() {
		t.Fatalf("claude-code %+v", c)
	}
	cur, _ := os.ReadFile(filepath.Join(w.agent, "mcp.json"))
	path, data, err := PlanImports(w.src(), cur, []string{"codex"})
	if err != nil || path != filepath.Join(w.agent, "mcp.json") {
		t.Fatal(path, err)
	}
	if s := string(data); !strings.Contains(s, "// mine") || !strings.Contains(s, `"idleTimeout": 2`) || !strings.Contains(s, `"imports": ["codex"]`) {
		t.Fatalf("agent file:\n%s", data)
	}
	data, _ = AddImports(data, []string{"codex", "vscode"})
	if !strings.Contains(string(data), `"imports": ["codex", "vscode"]`) {
		t.Fatalf("append:\n%s", data)
	}
	if _, err := AddImports(nil, []string{"emacs"}); err == nil {
		t.Fatal("unknown host accepted")
	}
}

// A name with JSON Pointer's special characters edits its own entry.
func TestSetDisabledEscapesTheName(t *testing.T) {
	in := []byte(`{"mcpServers": {"org/repo~1": {"command": "x"}, "GitHub": {"command": "y"}}}`)
	out, err := SetDisabled(in, "org/repo~1", ptr(true))
	if err != nil {
		t.Fatal(err)
	}
	f, issues, err := Parse(out, "x.json")
	if err != nil || len(issues) != 0 || !f.MCPServers["org/repo~1"].Disabled || f.MCPServers["GitHub"].Disabled || len(f.MCPServers) != 2 {
		t.Fatalf("%s: %+v %v %v", out, f.MCPServers, issues, err)
	}
}

// What detect says an import adds is what the import adds: a VS Code
// server that uses ${input:...} (which only VS Code can resolve) or whose
// entry the strict checks refuse is listed as skipped, with why, and the
// import indeed leaves it out.
func TestDetectSaysWhatTheImportDoes(t *testing.T) {
	w := newWorld(t)
	write(t, filepath.Join(w.work, ".vscode", "mcp.json"), `{"servers":{
		"github":{"type":"http","url":"https://api.githubcopilot.com/mcp/","headers":{"Authorization":"Bearer ${input:token}"}},
		"badtype":{"command":"x","args":"not-a-list"},
		"time":{"command":"uvx","args":["mcp-server-time"]}}}`)
	reports, err := Detect(w.src())
	if err != nil || len(reports) != 1 {
		t.Fatalf("%+v %v", reports, err)
	}
	f := reports[0].Files[0]
	var skipped []string
	for _, s := range f.Skipped {
		skipped = append(skipped, s.Name+": "+s.Reason)
	}
	if strings.Join(f.New, ",") != "time" || len(f.Skipped) != 2 ||
		!strings.Contains(strings.Join(skipped, "\n"), "github: field headers uses a variable only that host can resolve") {
		t.Fatalf("new %v, skipped %q", f.New, skipped)
	}
	write(t, filepath.Join(w.agent, "mcp.json"), `{"imports":["vscode"]}`)
	eff := w.load(t)
	var names []string
	for _, s := range eff.Servers {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != strings.Join(f.New, ",") {
		t.Fatalf("detect said it would add %v; the import added %v", f.New, names)
	}
}
