package mcprt

import (
	"os"
	"path/filepath"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// ConfigSources says where the configuration of a runtime started with
// opts comes from: only Config when set, only ConfigPath when set, else the
// standard files of the user, the agent dir (Options.AgentDir, else
// $MCPRT_AGENT_DIR, else ~/.mcprt/agent) and the working directory
// (Options.WorkDir, else the process's). Environment variables are read
// from the process environment, when the configuration is loaded.
func ConfigSources(opts Options) config.Sources {
	home, _ := os.UserHomeDir()
	work := opts.WorkDir
	if work == "" {
		work, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(work); err == nil {
		work = abs
	}
	return config.Sources{
		Path: opts.ConfigPath, Inline: opts.Config,
		WorkDir: work, AgentDir: agentDir(opts, home), Home: home,
		LookupEnv: os.LookupEnv,
	}
}

// agentDir is Options.AgentDir, else $MCPRT_AGENT_DIR, else ~/.mcprt/agent
// (never ~/.mcprt itself, so that with the home directory as working
// directory it cannot coincide with the project override ~/.mcprt/mcp.json).
func agentDir(opts Options, home string) string {
	dir := opts.AgentDir
	if dir == "" {
		dir = os.Getenv("MCPRT_AGENT_DIR")
	}
	if dir == "" && home != "" {
		dir = filepath.Join(home, ".mcprt", "agent")
	}
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	return dir
}

// LoadConfig loads the configuration a runtime started with opts would
// run with, without starting anything. Commands of secret values are not
// run.
func LoadConfig(opts Options) (*config.Effective, error) {
	eff, err := config.Load(ConfigSources(opts))
	if err != nil {
		return nil, &messages.Error{Kind: messages.KindConfig, Message: err.Error()}
	}
	return eff, nil
}

// loadConfig reads the configuration Options point at.
func loadConfig(opts Options) (*config.Effective, error) { return LoadConfig(opts) }
