package mcprt

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
	"github.com/mcprt/mcprt/tools"
)

// CacheView answers the `mcp` proxy tool's modes that connect nothing
// (status, search, describe, instructions, and list of a server whose tools
// are known) from the configuration and the metadata cache alone: no
// actors, no transports, no goroutines. It is for short-lived processes
// such as `runtime status`, for which starting a runtime costs more than
// the answer. The answers are the runtime's own: the same code (tools.MCP)
// renders them, from the state a runtime started with the same Options
// would have before anything happened (runtime_cache_view_test.go compares
// the two). Its methods are safe for concurrent use.
type CacheView struct {
	mcp     *tools.MCP
	servers []string
	host    *hostCalls

	once    sync.Once
	notices []messages.Notice // Start's notices, delivered with the first answer
}

// OpenCacheView reads the configuration and the metadata cache as Start
// would, and fails as Start would on a configuration that cannot be read.
// It returns nil and no error when a runtime started with opts would
// connect something at once, which could change the answers: an enabled
// eager or keep-alive server, or direct tools whose server has no cached
// metadata yet.
func OpenCacheView(opts Options) (*CacheView, error) {
	eff, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	servers, err := serverConfigs(eff)
	if err != nil {
		return nil, err
	}
	v := &CacheView{host: &hostCalls{host: opts.Host}}
	for _, s := range servers {
		if m := s.Policy.Mode; !s.Policy.Disabled && (m == supervisor.Eager || m == supervisor.KeepAlive) {
			return nil, nil
		}
		v.servers = append(v.servers, s.Name)
	}
	var cache *catalog.CacheFile
	if path := cachePath(opts); path != "" {
		cache, err = catalog.ReadCache(path)
		if err != nil && opts.Logger != nil {
			opts.Logger.Warn("metadata cache not used", "error", err)
		}
	}
	v.mcp = tools.NewCachedMCP(toolOptions(opts, eff), cache, opts.sim().Clock)
	surf := v.mcp.Surface(reservedNames(opts.HostTools))
	if len(surf.Waiting) > 0 {
		return nil, nil
	}
	// The notices Start gives, in its order: configuration issues, a host
	// tool named mcp or mcp_events, the direct tools' issues.
	for _, is := range eff.Issues {
		v.notices = append(v.notices, messages.Notice{Level: messages.NoticeWarning, Server: is.Server, Text: is.String()})
	}
	for _, is := range proxyToolIssue(opts.HostTools) {
		v.notices = append(v.notices, messages.Notice{Level: messages.NoticeWarning, Text: is.String()})
	}
	notices, _ := (&toolSurface{issues: map[string]bool{}}).noticesLocked(surf)
	v.notices = append(v.notices, notices...)
	return v, nil
}

// Servers returns the configured server names in configuration order.
func (v *CacheView) Servers() []string { return append([]string(nil), v.servers...) }

// Execute runs the proxy tool with the model's arguments, exactly as the
// runtime's `mcp` tool would, when the mode connects nothing; ok is false,
// and nothing is done, for a call, a connect, or a list of a server whose
// tools are not known yet (start a runtime for those). The first answer
// comes after the notices Start would have given the host.
func (v *CacheView) Execute(ctx context.Context, args json.RawMessage) (res Result, ok bool) {
	res, ok = v.mcp.ExecuteCached(ctx, args)
	if ok {
		v.once.Do(func() {
			for _, n := range v.notices {
				v.host.notify(ctx, n)
			}
		})
	}
	return res, ok
}

// StatusSnapshot returns the status a runtime started with the same Options
// would report before connecting anything.
func (v *CacheView) Status() StatusSnapshot { return v.mcp.Snapshot() }
