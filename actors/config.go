package actors

import (
	"github.com/mcprt/mcprt/eventstream"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// ServerConfig is one configured server as the actors need it.
type ServerConfig struct {
	Name     string
	Endpoint messages.Endpoint
	Policy   supervisor.Policy
	// StartupTimeout bounds spawn or dial through handshake (default 30 s).
	StartupTimeout time.Duration
	// CatalogTimeout bounds all pages of one listing (default 30 s).
	CatalogTimeout time.Duration
	// CallTimeout bounds a tool call, prompt or resource read (default 60 s).
	CallTimeout time.Duration
	// HealthTimeout caps a keep-alive health check (default 5 s).
	HealthTimeout time.Duration
	// CacheKey is the server's identity hash (catalog.IdentityHash): its
	// metadata is read from and written to the disk cache under it. Empty
	// means the server's metadata is never cached.
	CacheKey string
	// ListOnConnect lists the catalog (tools, resources, templates, prompts)
	// on every new connection, so that the catalog and the cache follow the
	// server; callers that need the catalog join that listing. The runtime
	// sets it for every server; without it only explicit Refresh and
	// ListAll commands list.
	ListOnConnect bool
}

// Defaults for ServerConfig deadlines.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultCatalogTimeout = 30 * time.Second
	DefaultCallTimeout    = 60 * time.Second
	// DefaultMaxStarts is how many servers may be starting at once.
	DefaultMaxStarts = 4
	// dispatchThroughput is how many messages an activation handles before
	// it yields the processor.
	dispatchThroughput = 300
)

func (c ServerConfig) withDefaults() ServerConfig {
	if c.StartupTimeout <= 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.CatalogTimeout <= 0 {
		c.CatalogTimeout = DefaultCatalogTimeout
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.HealthTimeout <= 0 {
		c.HealthTimeout = supervisor.DefaultHealthTimeout
	}
	return c
}

// Config is everything System needs. The four seams (Clock, Rand,
// Dispatcher, Dialer) default to production when nil.
type Config struct {
	Servers []ServerConfig
	// Clock times every timer; default the wall clock.
	Clock clock.Clock
	// Rand makes every id; default crypto-seeded.
	Rand clock.Rand
	// Dispatcher runs every actor. The default runs an activation inline on
	// the goroutine that posted the message (protoactor's synchronized
	// dispatcher): actors never block, so this is safe, and it saves two
	// goroutine hand-offs per call (see docs/performance.md). The mailbox
	// still guarantees one message at a time per actor.
	Dispatcher actor.Dispatcher
	// Dialer is the connection port; required.
	Dialer messages.Dialer
	// Logger receives protoactor's and the runtime's diagnostics; nil
	// discards them.
	Logger *slog.Logger
	// ClientName and ClientVersion are sent in every handshake.
	ClientName, ClientVersion string
	// MaxStarts bounds concurrent server starts (default 4).
	MaxStarts int
	// Restart is the crash policy's restart delays and window (default
	// supervisor.DefaultRestartPolicy).
	Restart *supervisor.RestartPolicy
	// InjectCrash is the crash-injection seam, for simulation and tests
	// only (nil in production): see messages.CrashInjector.
	InjectCrash messages.CrashInjector
	// CachePath is the metadata cache file (<agentDir>/mcp-cache.json);
	// empty means no disk cache. Valid entries seed the catalog at Start.
	CachePath string
	// OnChange, when set, is called whenever a server's status or the
	// catalog changes. It runs on the goroutine of whichever actor made the
	// change, possibly concurrently with itself, and must not block (a
	// non-blocking channel send is the intended use).
	OnChange func()
	// Deliver hands an events wakeup to the agent host; Notify shows a
	// notice in its UI. Both are called from actors and must not block;
	// nil drops them.
	Deliver func(messages.HostMessage)
	Notify  func(messages.Notice)
	// ClientNote receives the server notifications meant for the host
	// (progress, log messages, the end of a URL-mode elicitation), in
	// each server's order; called from actors, it must not block; nil
	// drops them.
	ClientNote func(messages.ClientNote)
	// Events tunes the events companion's timers and budgets (zero fields
	// take the defaults of events-protocol.md).
	Events eventstream.Limits
	// EventBatch tunes the wakeup batchers (zero fields: 500 ms, 256
	// items, 64,000 bytes).
	EventBatch eventstream.BatchLimits
}
