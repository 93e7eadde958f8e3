package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// TestConfigSources: the agent dir is mcprt.Options.AgentDir, else
// $MCPRT_AGENT_DIR, else ~/.mcprt/agent; the working directory is
// absolute; the environment is the process's.
func TestConfigSources(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("MCPRT_AGENT_DIR", "")
	t.Setenv("MCPRT_CONFIG_TEST_VAR", "v")
	src := mcprt.ConfigSources(mcprt.Options{WorkDir: "."})
	if src.Home != home || src.AgentDir != filepath.Join(home, ".mcprt", "agent") || !filepath.IsAbs(src.WorkDir) {
		t.Fatalf("defaults %+v", src)
	}
	if v, ok := src.LookupEnv("MCPRT_CONFIG_TEST_VAR"); !ok || v != "v" {
		t.Fatal("the environment is not the process's")
	}
	t.Setenv("MCPRT_AGENT_DIR", filepath.Join(home, "from-env"))
	if src := mcprt.ConfigSources(mcprt.Options{}); src.AgentDir != filepath.Join(home, "from-env") {
		t.Fatalf("MCPRT_AGENT_DIR: %s", src.AgentDir)
	}
	if src := mcprt.ConfigSources(mcprt.Options{AgentDir: filepath.Join(home, "opt")}); src.AgentDir != filepath.Join(home, "opt") {
		t.Fatalf("Options.AgentDir: %s", src.AgentDir)
	}
}

// TestLoadConfigLayersAndIsolation: mcprt.LoadConfig reads the standard files of
// mcprt.Options.WorkDir and the agent dir; an in-memory Config is read alone and
// each load gets its own copy; a broken file is a config error.
func TestLoadConfigLayersAndIsolation(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	agent := filepath.Join(home, "agent")
	writeFile(t, filepath.Join(home, ".config", "mcp", "mcp.json"), `{"mcpServers":{"g":{"command":"global"}}}`)
	writeFile(t, filepath.Join(agent, "mcp.json"), `{"mcpServers":{"g":{"args":["--agent"]}}}`)
	writeFile(t, filepath.Join(work, ".mcprt", "mcp.json"), `{"mcpServers":{"g":{"disabled":true}}}`)
	eff, err := mcprt.LoadConfig(mcprt.Options{WorkDir: work, AgentDir: agent})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := eff.Server("g")
	if !ok || g.Command != "global" || g.Args[0] != "--agent" || !g.Disabled {
		t.Fatalf("merged %+v", g)
	}
	in := &config.File{MCPServers: map[string]config.Server{"m": {Command: "x", Env: map[string]string{"K": "v"}}}}
	opts := mcprt.Options{WorkDir: work, AgentDir: agent, Config: in}
	one, _ := mcprt.LoadConfig(opts)
	two, _ := mcprt.LoadConfig(opts)
	if len(one.Servers) != 1 || one.Servers[0].Name != "m" {
		t.Fatalf("in-memory configuration merged with files: %+v", one.Servers)
	}
	one.Servers[0].Env["K"] = "changed"
	if two.Servers[0].Env["K"] != "v" || in.MCPServers["m"].Env["K"] != "v" {
		t.Fatal("two loads of one snapshot share state")
	}
	writeFile(t, filepath.Join(work, ".mcp.json"), `{"mcpServers":`)
	_, err = mcprt.LoadConfig(mcprt.Options{WorkDir: work, AgentDir: agent})
	if messages.KindOf(err) != messages.KindConfig {
		t.Fatalf("broken file: %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
