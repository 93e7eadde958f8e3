package mcprt

import (
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// loadConfig reads the configuration Options point at: only ConfigPath when
// set, only the in-memory Config when set, else the standard files.
func loadConfig(opts Options) (*config.Effective, error) {
	eff, err := config.Load(config.Sources{Path: opts.ConfigPath, WorkDir: opts.WorkDir, Inline: opts.Config})
	if err != nil {
		return nil, &messages.Error{Kind: messages.KindConfig, Message: err.Error()}
	}
	return eff, nil
}
