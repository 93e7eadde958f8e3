package mcprt

import (
	"context"
	"log/slog"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
)

// HostMessage is something the runtime delivers into the host's
// conversation (an events wakeup): Kind, the Text the model reads,
// Details for the host's UI, TriggerTurn and DeliverAs.
type HostMessage = messages.HostMessage

// Notice is a message for the host's UI, never for the model.
type Notice = messages.Notice

// NoticeLevel grades a Notice.
type NoticeLevel = messages.NoticeLevel

// The levels of a Notice.
const (
	NoticeInfo    = messages.NoticeInfo
	NoticeWarning = messages.NoticeWarning
	NoticeError   = messages.NoticeError
)

// Host is the agent host embedding the runtime. Both methods must return
// promptly; the runtime calls them one at a time.
type Host interface {
	// Deliver puts a message into the conversation (events wakeups).
	Deliver(ctx context.Context, m HostMessage)
	// Notify shows a notice to the user, never to the model.
	Notify(ctx context.Context, n Notice)
}

// Options configure Start. The zero value runs with the configuration files
// of the working directory and every production seam.
type Options struct {
	// Host receives deliveries and notices; nil drops them.
	Host Host
	// Client holds the host's answers to what servers ask of the client
	// (elicitation, sampling, roots) and its progress hook; zero hooks
	// advertise no capability (see ClientHooks).
	Client ClientHooks
	// AgentDir holds the runtime's own files (metadata cache, overrides,
	// protocol traces).
	// Default: $MCPRT_AGENT_DIR, else ~/.mcprt/agent.
	AgentDir string
	// ResultDir is where a full result cut by the output guard is saved
	// (one file each, mode 0600, in a directory of mode 0700 that outlives
	// the process; the oldest are removed once the files pass 256 MiB or
	// 7 days). Default: $MCPRT_RESULT_DIR, else tools.DefaultResultDir()
	// (~/.cache/mcprt/results on Linux).
	ResultDir string
	// WorkDir is where project configuration (.mcp.json) is looked up.
	// Default: the process's working directory.
	WorkDir string
	// ConfigPath, when set, is the only configuration file read.
	ConfigPath string
	// Config, when set, is an isolated in-memory configuration: no file is
	// read, nothing is merged into it or written, and the runtime works on
	// its own copy.
	Config *config.File
	// HostTools are the names of the host's own tools, so the runtime never
	// registers a tool that collides with one.
	HostTools []string
	// Logger receives diagnostics. Nil means silent, unless the environment
	// variable MCPRT_LOG=debug asks for debug logs on stderr.
	Logger *slog.Logger
	// ClientName and ClientVersion identify mcprt in handshakes.
	ClientName, ClientVersion string
	// Auth configures OAuth for remote servers (runtime_auth.go).
	Auth AuthOptions

	// MaxResponseBytesInFlight bounds the bytes of HTTP responses being
	// read at once, across every server: a call whose response would take
	// the total over it fails with resource_exhausted instead of growing
	// the heap (docs/transports.md). 0 means the default,
	// transports.DefaultResponseBudget (256 MiB); a negative value means no
	// budget. It applies to the production dialer (no Sim.Dialer).
	MaxResponseBytesInFlight int64

	// Sim holds the seams for deterministic simulation and tests (clock,
	// random source, dispatcher, connection port, crash injection). A host
	// leaves it nil: production.
	Sim *simseam.Seams
}

// sim returns the seams (zero: production).
func (o Options) sim() simseam.Seams { return simseam.Get(o.Sim) }
