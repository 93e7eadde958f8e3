package mcprt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/auth"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/trace"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
	"github.com/mcprt/mcprt/tools"
	"github.com/mcprt/mcprt/transports"
)

// Version is mcprt's version as sent in handshakes.
const Version = "0.1.0"

// Tool is an agent-facing tool; see tools.Tool.
type Tool = tools.Tool

// Result is a tool's result; see tools.Result.
type Result = tools.Result

// MCPToolName is the name of the proxy tool.
const MCPToolName = tools.MCPToolName

// EventsToolName is the events tool's name.
const EventsToolName = tools.EventsToolName

// Runtime is a running mcprt. Its methods are safe for concurrent use.
type Runtime struct {
	sys    *actors.System
	dialer *transports.Dialer // nil when a Dialer was injected
	logger *slog.Logger

	issueMu sync.Mutex
	issues  []config.Issue // guarded by issueMu

	// The tool surface (runtime_tools.go) and the watchers
	// (runtime_status.go).
	mcp       *tools.MCP
	hostTools []string
	settings  config.Settings
	surface   toolSurface
	watch     watchers
	ready     atomic.Bool // set once mcp exists; the change hook waits for it

	host   *hostCalls
	client *clientSide
	events Tool // mcp_events

	authorizers map[string]*auth.Authorizer // by server name; read-only after Start
	trace       *trace.Writer               // nil when no server is traced

	closeOnce sync.Once
	closeErr  error
}

// Start reads the configuration and starts one supervised actor per
// configured server. It does not wait for any server: lazy servers connect
// on first use, eager and keep-alive ones start connecting now. A
// configuration that cannot be read at all is an error of kind
// messages.KindConfig; problems with single entries are reported through
// ConfigIssues (and Host.Notify) while every other server runs.
func Start(ctx context.Context, opts Options) (*Runtime, error) {
	eff, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = defaultLogger()
	}
	rt := &Runtime{issues: eff.Issues, logger: logger, host: &hostCalls{host: opts.Host}}
	rt.client = newClientSide(rt, opts.Client)
	for _, is := range eff.Issues {
		rt.host.notify(ctx, messages.Notice{Level: messages.NoticeWarning, Server: is.Server, Text: is.String()})
	}
	servers, err := serverConfigs(eff)
	if err != nil {
		return nil, err
	}
	dialer := opts.sim().Dialer
	if dialer == nil {
		rt.dialer = &transports.Dialer{Clock: opts.sim().Clock, Logger: logger.With("component", "transports"), ResponseBudget: opts.MaxResponseBytesInFlight,
			Stderr: func(server, line string) {
				logger.Info("server stderr", "server", server, "line", line)
				rt.host.notify(context.Background(), messages.Notice{Level: messages.NoticeInfo, Server: server, Text: "stderr: " + line})
			},
			ServerRequests: rt.client.serve, Capabilities: rt.client.capabilities(),
			Notify: func(server, text string) {
				rt.host.notify(context.Background(), messages.Notice{Level: messages.NoticeInfo, Server: server, Text: text})
			}}
		if ms := eff.Settings.NpxInstallTimeoutMs; ms != nil {
			rt.dialer.NpxInstallTimeout = time.Duration(*ms) * time.Millisecond
		}
		dialer = rt.dialer
	}
	var secrets func(ctx context.Context, server, field, value string) (string, error)
	if rt.dialer != nil {
		secrets = rt.dialer.SecretValue
	}
	rt.authorizers = buildAuthorizers(eff, opts, rt.host, secrets)
	if rt.dialer != nil {
		rt.dialer.HTTPAuth = rt.httpAuth
	}
	dialer, rt.trace = withTracing(dialer, opts, eff, logger)
	name, version := opts.ClientName, opts.ClientVersion
	if name == "" {
		name, version = "mcprt", Version
	}
	cache := cachePath(opts)
	withCatalog(servers, eff, cache)
	sys, err := actors.Start(actors.Config{
		Servers: servers, Clock: opts.sim().Clock, Rand: opts.sim().Rand, Dispatcher: opts.sim().Dispatcher, Dialer: dialer,
		Logger: logger, ClientName: name, ClientVersion: version, CachePath: cache, OnChange: rt.changed,
		Deliver:    func(m messages.HostMessage) { rt.host.deliver(context.Background(), m) },
		Notify:     func(n messages.Notice) { rt.host.notify(context.Background(), n) },
		ClientNote: rt.client.note,
		Events:     opts.sim().Events, EventBatch: opts.sim().EventBatch, InjectCrash: opts.sim().InjectCrash,
	})
	if err != nil {
		if rt.trace != nil {
			rt.trace.Close()
		}
		return nil, &messages.Error{Kind: messages.KindConfig, Message: err.Error()}
	}
	rt.sys = sys
	rt.buildTools(ctx, opts, eff)
	return rt, nil
}

// serverConfigs turns effective configuration into what the actors need.
func serverConfigs(eff *config.Effective) ([]actors.ServerConfig, error) {
	out := make([]actors.ServerConfig, 0, len(eff.Servers))
	for _, s := range eff.Servers {
		mode, err := supervisor.ParseMode(s.Lifecycle)
		if err != nil {
			return nil, &messages.Error{Kind: messages.KindConfig, Server: s.Name, Message: "field lifecycle: " + err.Error()}
		}
		out = append(out, actors.ServerConfig{
			Name:           s.Name,
			Endpoint:       s.Endpoint(),
			Policy:         supervisor.Policy{Mode: mode, IdleTimeout: s.Idle(eff.Settings), Disabled: s.Disabled},
			StartupTimeout: s.StartupTimeout(), CatalogTimeout: s.CatalogTimeout(), CallTimeout: s.CallTimeout(eff.Settings),
		})
	}
	return out, nil
}

func defaultLogger() *slog.Logger {
	if os.Getenv("MCPRT_LOG") == "debug" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// ServerStatuses returns every configured server's detailed status from
// its actor (lifecycle, generation, leases, last error, late frames)
// without connecting any. For the host's summary with tool and resource
// counts and totals, see Status.
func (r *Runtime) ServerStatuses() []messages.ServerStatus { return r.sys.Status(context.Background()) }

// Servers returns the configured server names in configuration order.
func (r *Runtime) Servers() []string { return r.sys.Names() }

// ConfigIssues returns the configuration problems found at Start, and the
// tools that could not be registered since.
func (r *Runtime) ConfigIssues() []config.Issue {
	r.issueMu.Lock()
	defer r.issueMu.Unlock()
	return append([]config.Issue(nil), r.issues...)
}

// Connect connects (or, with fresh, reconnects) a server now and lists its
// catalog (tools, resources, prompts), updating the disk cache.
func (r *Runtime) Connect(ctx context.Context, server string, fresh bool) (messages.ServerInfo, error) {
	c := r.sys.Connect(ctx, server, fresh)
	if c.Err != nil {
		return messages.ServerInfo{}, c.Err
	}
	if err := r.sys.Refresh(ctx, server, messages.OriginExplicit, false); err != nil {
		return c.Info, err
	}
	return c.Info, nil
}

// Close shuts the runtime down: new calls are refused, in-flight calls fail,
// every connection closes and every child process is reaped, every actor
// stops, and every goroutine the runtime started has returned. It is
// bounded in time and safe to call more than once.
func (r *Runtime) Close() error {
	r.closeOnce.Do(func() {
		if r.dialer != nil {
			r.dialer.Shutdown() // installs in progress stop; their dials fail
		}
		err := r.sys.Close()
		r.shutdownWatchers()
		if r.dialer != nil && !r.dialer.WaitFor(actors.ShutdownTimeout) {
			err = errors.Join(err, fmt.Errorf("mcprt: transport goroutines did not end within %s", actors.ShutdownTimeout))
		}
		if r.trace != nil {
			r.trace.Close() // after the connections: their last lines are written
		}
		r.closeErr = err
	})
	return r.closeErr
}

// hostCalls calls the host one call at a time, as Host's contract promises.
type hostCalls struct {
	mu   sync.Mutex // serialises calls into host
	host Host
}

func (h *hostCalls) deliver(ctx context.Context, m messages.HostMessage) {
	h.call(func(host Host) { host.Deliver(ctx, m) })
}

func (h *hostCalls) notify(ctx context.Context, n messages.Notice) {
	h.call(func(host Host) { host.Notify(ctx, n) })
}

// call runs f with the host, one call at a time; nothing without a host.
func (h *hostCalls) call(f func(Host)) {
	if h.host == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h.host)
}
