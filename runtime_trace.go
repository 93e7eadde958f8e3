package mcprt

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/trace"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/transports"
)

// TraceDirName is the directory under the agent directory that holds the
// protocol traces: one SERVER.jsonl per traced server (docs/tracing.md).
const TraceDirName = "traces"

// withTracing puts the tracing dialer in front of dialer when the
// configuration traces a server (its "trace": true, or settings.trace),
// and returns the writer to close at the end (nil when nothing is traced
// or there is no agent directory to write to).
func withTracing(dialer messages.Dialer, opts Options, eff *config.Effective, logger *slog.Logger) (messages.Dialer, *trace.Writer) {
	traced := map[string]bool{}
	for _, s := range eff.Servers {
		if (s.Trace || eff.Settings.Trace) && !s.Disabled {
			traced[s.Name] = true
		}
	}
	if len(traced) == 0 {
		return dialer, nil
	}
	home, _ := os.UserHomeDir()
	agent := agentDir(opts, home)
	if agent == "" {
		logger.Warn("protocol tracing is off: there is no agent directory to write the traces to")
		return dialer, nil
	}
	dir := filepath.Join(agent, TraceDirName)
	w := trace.Open(dir, func(err error) { logger.Warn("protocol trace", "error", err) })
	for name := range traced {
		logger.Info("tracing the protocol (metadata only)", "server", name, "file", filepath.Join(dir, trace.FileName(name)))
	}
	isTraced := func(server string) bool { return traced[server] }
	if td, ok := dialer.(*transports.Dialer); ok {
		td.ServerRequests = trace.WrapServerRequests(td.ServerRequests, opts.sim().Clock, w, isTraced)
	}
	return trace.Wrap(dialer, opts.sim().Clock, w, isTraced), w
}
