package mcprt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/tools"
)

// EnvDirectTools overrides every server's directTools: "srv" exposes all of
// a server's tools, "srv/tool" one tool, "__none__" none (comma-separated).
const EnvDirectTools = "MCPRT_DIRECT_TOOLS"

// EnvResultDir names the directory for saved full results when
// Options.ResultDir is empty.
const EnvResultDir = "MCPRT_RESULT_DIR"

// toolSurface is the agent-facing tool set at one catalog version.
type toolSurface struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	version  uint64 // catalog version the tools were built for
	peerGen  uint64 // and the generation of the other members' servers (tools.MCP.PeerGen)
	built    bool
	tools    []Tool
	issues   map[string]bool // issues already reported
	warned75 bool
}

// cachePath returns the metadata cache file, or "" when the runtime keeps
// no disk cache: it does with an explicit AgentDir, and by default for the
// configuration files; an isolated in-memory configuration or an injected
// Dialer (simulation, tests) touches no ambient file unless AgentDir is
// given. The agent directory is Options.AgentDir, else $MCPRT_AGENT_DIR,
// else ~/.mcprt/agent (the same resolution as the configuration's).
func cachePath(opts Options) string {
	dir := opts.AgentDir
	if dir == "" {
		if opts.Config != nil || opts.sim().Dialer != nil {
			return ""
		}
		dir = os.Getenv("MCPRT_AGENT_DIR")
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		dir = filepath.Join(home, ".mcprt", "agent")
	}
	return filepath.Join(dir, catalog.CacheFileName)
}

// withCatalog adds what the catalog needs to the servers' actor
// configuration: the identity hash the cache is keyed by, and listing on
// every connect.
func withCatalog(servers []actors.ServerConfig, eff *config.Effective, cache string) {
	for i := range servers {
		servers[i].ListOnConnect = true
		if cache != "" && !eff.Servers[i].Disabled {
			servers[i].CacheKey = catalog.IdentityHash(eff.Servers[i])
		}
	}
}

// buildTools makes the proxy tool and the direct tools, reports what could
// not be registered, and starts the background listing of servers whose
// direct tools have no cached metadata yet.
func (r *Runtime) buildTools(ctx context.Context, opts Options, eff *config.Effective) {
	topts := toolOptions(opts, eff)
	topts.UserAsked = r.client.askedCount
	topts.Auth = authActions{r}
	r.mcp = tools.NewMCP(r.sys, topts)
	r.mcp.SetPeersChanged(r.toolsChanged)
	r.events = tools.NewEvents(r.sys.Events())
	r.hostTools = opts.HostTools
	r.settings = eff.Settings
	r.surface.issues = map[string]bool{}
	r.ready.Store(true)
	for _, is := range proxyToolIssue(opts.HostTools) {
		r.issueMu.Lock()
		r.issues = append(r.issues, is)
		r.issueMu.Unlock()
		r.host.notify(ctx, messages.Notice{Level: messages.NoticeWarning, Text: is.String()})
	}
	_, waiting := r.currentTools(ctx)
	for _, s := range waiting {
		// Fill the cache once in the background; the direct tools appear
		// when it is listed (WatchTools tells the host).
		r.sys.Post(s, &actors.Refresh{Token: r.sys.NewToken(), Origin: messages.OriginInternal})
	}
}

// Tools returns the agent-facing tools to register with the model loop:
// the proxy tool `mcp` (unless settings.disableProxyTool hides it because
// every server is direct and all their tools are known) and the direct
// tools, as the catalog stands now. After WatchTools signals, call it
// again.
func (r *Runtime) Tools() []Tool {
	t, _ := r.currentTools(context.Background())
	return append([]Tool(nil), t...)
}

// Tool returns the agent-facing tool with the given name.
func (r *Runtime) Tool(name string) (Tool, bool) {
	all, _ := r.currentTools(context.Background())
	for _, t := range all { // read only: no copy of the list
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// currentTools rebuilds the tool set when the catalog changed, reports new
// issues (unsupported schemas, collisions, 75 or more direct tools) to the
// host once each, and returns the servers whose direct tools wait for a
// first listing.
func (r *Runtime) currentTools(ctx context.Context) ([]Tool, []string) {
	version := r.sys.Catalog().Snapshot().Version
	peerGen := r.mcp.PeerGen()
	s := &r.surface
	s.mu.Lock()
	if s.built && s.version == version && s.peerGen == peerGen {
		defer s.mu.Unlock()
		return s.tools, nil
	}
	surf := r.mcp.Surface(reservedNames(r.hostTools))
	var out []Tool
	hideProxy := r.settings.DisableProxyTool && surf.AllDirect && surf.Complete
	if !hideProxy && !slices.Contains(r.hostTools, MCPToolName) {
		out = append(out, r.mcp.Tool())
	}
	out = append(out, surf.Direct...)
	if !slices.Contains(r.hostTools, EventsToolName) {
		out = append(out, r.events)
	}
	notices, issues := s.noticesLocked(surf)
	r.issueMu.Lock()
	r.issues = append(r.issues, issues...)
	r.issueMu.Unlock()
	s.version, s.peerGen, s.built, s.tools = version, peerGen, true, out
	s.mu.Unlock()
	for _, n := range notices {
		r.host.notify(ctx, n)
	}
	return out, surf.Waiting
}

// noticesLocked records a tool surface's issues and returns those not
// reported before, with the notices they and the warning about 75 or more
// direct tools raise (each once). s.mu is held.
func (s *toolSurface) noticesLocked(surf tools.Surface) ([]messages.Notice, []config.Issue) {
	var notices []messages.Notice
	var issues []config.Issue
	for _, c := range surf.Changed {
		notices = append(notices, messages.Notice{Level: messages.NoticeWarning, Text: fmt.Sprintf(
			"direct tool %s changed (a new definition): register the tools again (Runtime.Tools); calls through the old registration are refused", c)})
	}
	for _, is := range surf.Issues {
		if !s.issues[is] {
			s.issues[is] = true
			issues = append(issues, config.Issue{Message: is})
			notices = append(notices, messages.Notice{Level: messages.NoticeWarning, Text: is})
		}
	}
	if len(surf.Direct) >= tools.DirectWarnAt && !s.warned75 {
		s.warned75 = true
		notices = append(notices, messages.Notice{Level: messages.NoticeWarning, Text: fmt.Sprintf(
			"%d direct tools are registered; each costs prompt tokens on every turn: consider the mcp proxy tool or a directTools list", len(surf.Direct))})
	}
	return notices, issues
}

// EnvOutputGuard set to "0" turns the output guard off, as
// settings.outputGuard false does (seed 002's kill switch).
const EnvOutputGuard = "MCP_OUTPUT_GUARD"

// toolOptions is what the tools need of the configuration.
func toolOptions(opts Options, eff *config.Effective) tools.Options {
	set := eff.Settings
	if os.Getenv(EnvOutputGuard) == "0" {
		set.OutputGuardOff = true
	}
	results := opts.ResultDir
	if results == "" {
		results = os.Getenv(EnvResultDir)
	}
	return tools.Options{Servers: eff.Servers, Settings: set, HostTools: opts.HostTools, Skipped: skippedServers(eff),
		DirectEnv: os.Getenv(EnvDirectTools), ResultDir: results, URLConsent: urlConsent(opts.Client), ProgressTokens: opts.Client.Progress != nil}
}

// skippedServers are the configured entries the configuration dropped (a
// server an issue names that is not among the usable servers), each with
// the first issue's message as a one-line reason: config's messages are
// safe to show (no secret values); the file is left out.
func skippedServers(eff *config.Effective) []tools.SkippedServer {
	usable := map[string]bool{}
	for _, s := range eff.Servers {
		usable[s.Name] = true
	}
	seen := map[string]bool{}
	var out []tools.SkippedServer
	for _, is := range eff.Issues {
		if is.Server == "" || usable[is.Server] || seen[is.Server] {
			continue
		}
		seen[is.Server] = true
		reason := is.Message
		if is.Field != "" {
			reason = "field " + is.Field + ": " + reason
		}
		reason = catalog.CleanText(strings.Join(strings.Fields(reason), " "))
		if r := []rune(reason); len(r) > 200 {
			reason = string(r[:199]) + "…"
		}
		out = append(out, tools.SkippedServer{Name: catalog.CleanText(is.Server), Reason: reason})
	}
	return out
}

// reservedNames maps the names direct tools must not take to who has them.
func reservedNames(hostTools []string) map[string]string {
	reserved := map[string]string{MCPToolName: "the proxy tool's", EventsToolName: "the events tool's"}
	for _, h := range hostTools {
		reserved[h] = fmt.Sprintf("the host's tool %q", h)
	}
	return reserved
}

// proxyToolIssue returns the issues of a host that has a tool named mcp or
// mcp_events itself: the runtime leaves its own out.
func proxyToolIssue(hostTools []string) []config.Issue {
	var out []config.Issue
	for _, name := range []string{MCPToolName, EventsToolName} {
		if slices.Contains(hostTools, name) {
			out = append(out, config.Issue{Message: fmt.Sprintf("tool %q is not registered: the host has a tool of that name", name)})
		}
	}
	return out
}
