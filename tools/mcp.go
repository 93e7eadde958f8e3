package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// MCPToolName is the proxy tool's name.
const MCPToolName = "mcp"

// mcpInputSchema is the proxy tool's one input schema: every field is
// optional, and which are set selects the mode.
var mcpInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "tool": {"type": "string", "description": "Call this MCP tool (name from search or list)"},
    "args": {"description": "Arguments for tool: a JSON object, or a JSON string holding one", "anyOf": [{"type": "object"}, {"type": "string"}]},
    "connect": {"type": "string", "description": "Connect (or reconnect) this server and refresh its tools"},
    "describe": {"type": "string", "description": "Show one tool's description and parameters"},
    "instructions": {"type": "string", "description": "Show this server's full usage instructions"},
    "search": {"type": "string", "description": "Search tools by words (or a regular expression with regex: true)"},
    "regex": {"type": "boolean", "description": "Treat search as a regular expression"},
    "includeSchemas": {"type": "boolean", "description": "Show parameters in search results (default true)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Search results per page (default 12)"},
    "offset": {"type": "integer", "minimum": 0, "description": "Search results to skip"},
    "read": {"type": "string", "description": "Read a resource by URI, or a resource template (its uriTemplate or name) with args; server names the server when needed"},
    "server": {"type": "string", "description": "List this server's tools (or narrow a search to it, or say whose tool to call or resource to read)"},
    "action": {"type": "string", "enum": ["auth-start", "auth-complete"], "description": "OAuth for a server with no browser here: auth-start (with server) returns the URL to open; auth-complete (with server, args {redirectUrl} or {code}) finishes it"}
  },
  "additionalProperties": false
}`)

// mcpArgs is the proxy tool's input.
type mcpArgs struct {
	Tool           string          `json:"tool"`
	Args           json.RawMessage `json:"args"`
	Connect        string          `json:"connect"`
	Describe       string          `json:"describe"`
	Instructions   string          `json:"instructions"`
	Search         *string         `json:"search"`
	Regex          bool            `json:"regex"`
	IncludeSchemas *bool           `json:"includeSchemas"`
	Limit          *int            `json:"limit"`
	Offset         *int            `json:"offset"`
	Server         string          `json:"server"`
	Read           string          `json:"read"`
	Action         string          `json:"action"`
}

// Options is the configuration the agent-facing tools need.
type Options struct {
	// Servers are the configured servers in configuration order (the
	// actors' names).
	Servers []config.Server
	// Settings are the file-wide settings (tool prefix, direct tools,
	// output limits).
	Settings config.Settings
	// HostTools are the host's own tool names: never shadowed.
	HostTools []string
	// Skipped are the configured servers that were dropped (an invalid
	// entry, over a limit), with a safe one-line reason each: the model
	// sees them in status and when it names one.
	Skipped []SkippedServer
	// DirectEnv is the value of MCPRT_DIRECT_TOOLS ("" when unset):
	// "srv,srv/tool" selects direct tools instead of the configuration,
	// "__none__" disables them.
	DirectEnv string
	// ResultDir is where full results cut by the output guard are saved
	// ("": DefaultResultDir()); ResultsMaxBytes and ResultsMaxAge cap the
	// directory (0: DefaultResultsMaxBytes, DefaultResultsMaxAge).
	ResultDir string
	// URLConsent asks the user to open the URL of a server's -32042 error
	// (nil: the model is told the host cannot show it).
	URLConsent URLConsent
	// UserAsked, when set, counts the questions a server has put to the
	// user (elicitations): a call during which it grew says so.
	UserAsked func(server string) uint64
	// ProgressTokens makes every tools/call carry a progress token, for a
	// host that shows progress.
	ProgressTokens  bool
	ResultsMaxBytes int64
	ResultsMaxAge   time.Duration
	// Auth runs the auth-start and auth-complete actions (mcp_auth.go);
	// nil refuses them.
	Auth AuthActions
}

// SkippedServer is a configured server that was dropped, and why.
type SkippedServer struct {
	// Name is the entry's name ("#N", its position, when the name itself
	// is unusable).
	Name string `json:"name"`
	// Reason is one line, safe to show (no secret, no server content).
	Reason string `json:"reason"`
}

// skipped returns the skipped server named name, if any.
func (m *MCP) skipped(name string) (SkippedServer, bool) {
	for _, s := range m.opts.Skipped {
		if s.Name == name {
			return s, true
		}
	}
	return SkippedServer{}, false
}

// MCP is the `mcp` proxy tool (and the owner of the direct tools, which
// share its catalog view and result rendering).
type MCP struct {
	sys     *actors.System // nil for a cache view (NewCachedMCP)
	src     source
	cfg     *servers
	opts    Options
	views   views
	outputs catalog.OutputSchemas
	limits  outputLimits
	// progressSeq numbers the progress tokens of calls.
	progressSeq atomic.Uint64
	// progressCallers maps the progress token of a call in flight whose
	// context carries a caller tag (messages.WithCaller) to that tag.
	progressCallers sync.Map
	results         *resultStore
	// directNames maps the names the last Surface registered direct tools
	// under to their tools, so the proxy resolves them too.
	directNames atomic.Pointer[map[string]toolKey]
	// directPrints are the fingerprints of the tools behind the last
	// Surface's direct tools.
	directPrints atomic.Pointer[map[toolKey]string]
	// tried holds the servers whose listing was tried to judge a name.
	tried sync.Map
	// peers offers the servers other members run (nil: none; peers.go),
	// and peerCat is what they offered last.
	peers   atomic.Pointer[peerHook]
	peerCat atomic.Pointer[peerState]
	// pdesc is what the description shows of them (peers_desc.go).
	pdesc peerDesc
}

// toolKey names one server's tool.
type toolKey struct{ server, tool string }

// NewMCP builds the proxy tool over a running actor system.
func NewMCP(sys *actors.System, opts Options) *MCP {
	return newMCP(sys, liveSource{sys}, opts, sys.Names())
}

// Tool returns the proxy tool in registrable form. Its description lists
// the servers as the catalog knows them now.
func (m *MCP) Tool() Tool {
	return Tool{Name: MCPToolName, Description: m.description(), InputSchema: mcpInputSchema, Execute: m.Execute}
}

// instructionsHead is how much of a server's instructions the tool's
// description shows.
const instructionsHead = 150

func (m *MCP) description() string {
	var b strings.Builder
	b.WriteString("Use MCP servers through one tool. Modes: {} status; {\"server\": \"s\"} list a server's tools; ")
	b.WriteString("{\"search\": \"words\"} find tools; {\"describe\": \"tool\"} show a tool's parameters; ")
	b.WriteString("{\"tool\": \"name\", \"args\": {...}} call a tool; {\"connect\": \"s\"} (re)connect a server; ")
	b.WriteString("{\"instructions\": \"s\"} a server's usage guidance; {\"read\": \"uri\"} read a resource (a template with args).")
	v := m.view()
	peers := m.peerLinesNow()
	if len(m.cfg.order) == 0 && len(m.opts.Skipped) == 0 && peers == "" {
		return b.String()
	}
	b.WriteString("\nServers:")
	for _, name := range m.cfg.order {
		sc := m.cfg.byName[name]
		n, known := v.count(name)
		switch {
		case sc.Disabled:
			fmt.Fprintf(&b, "\n- %s (disabled)", name)
		case known:
			fmt.Fprintf(&b, "\n- %s (%d tools)", name, n)
		default:
			fmt.Fprintf(&b, "\n- %s (tools not listed yet)", name)
		}
		if instr := v.snap.Server(name).Instructions; instr != "" && !sc.Disabled {
			fmt.Fprintf(&b, ": %s", clip(oneLine(instr), instructionsHead))
		}
	}
	for _, s := range m.opts.Skipped {
		fmt.Fprintf(&b, "\n- %s (skipped: %s)", s.Name, s.Reason)
	}
	b.WriteString(peers)
	return b.String()
}

func (m *MCP) view() *view { return m.views.get(m.src, m.cfg, m.peerCat.Load()) }

// Execute dispatches on the arguments in a fixed order: action > tool >
// connect > describe > instructions > search > server (list) > status.
func (m *MCP) Execute(ctx context.Context, raw json.RawMessage) Result {
	a, bad := decodeArgs(raw)
	if bad != nil {
		return failure(bad)
	}
	if m.sys == nil && m.connects(&a) {
		return failure(errCacheView)
	}
	return m.dispatch(ctx, &a)
}

// errCacheView refuses, in a cache view, what would connect a server.
var errCacheView = messages.Errorf(messages.KindInternal, "", "this view of the metadata cache connects no server")

// ExecuteCached runs the modes that connect nothing, exactly as Execute
// does; ok is false, and nothing is done, for a call, a connect, or a list
// of a server whose tools are not known yet.
func (m *MCP) ExecuteCached(ctx context.Context, raw json.RawMessage) (res Result, ok bool) {
	a, bad := decodeArgs(raw)
	if bad != nil {
		return failure(bad), true
	}
	if m.connects(&a) {
		return Result{}, false
	}
	return m.dispatch(ctx, &a), true
}

// decodeArgs decodes the proxy tool's arguments, refusing unknown fields.
func decodeArgs(raw json.RawMessage) (mcpArgs, *messages.Error) {
	var a mcpArgs
	if len(raw) == 0 || string(raw) == "null" {
		return a, nil
	}
	if fastArgs(raw, &a) {
		return a, nil
	}
	return decodeArgsJSON(raw)
}

// decodeArgsJSON is decodeArgs with encoding/json alone.
func decodeArgsJSON(raw json.RawMessage) (mcpArgs, *messages.Error) {
	var a mcpArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		if e := unknownFields(raw); e != nil {
			return a, e
		}
		return a, messages.Errorf(messages.KindInvalidArgs, "", "arguments must be a JSON object with optional fields tool, args, connect, describe, instructions, search, regex, includeSchemas, limit, offset, server, read and action")
	}
	return a, nil
}

func hasArgs(a *mcpArgs) bool { return len(a.Args) > 0 && string(a.Args) != "null" }

func (m *MCP) dispatch(ctx context.Context, a *mcpArgs) Result {
	switch {
	case a.Action != "":
		return m.action(ctx, a)
	case a.Tool != "" && a.Server != "":
		return m.callOn(ctx, a.Server, a.Tool, a.Args)
	case a.Tool != "":
		return m.call(ctx, a.Tool, a.Args)
	case a.Read != "":
		return m.read(ctx, a)
	case hasArgs(a):
		return failure(messages.Errorf(messages.KindInvalidArgs, "", `args needs a tool: call {"tool": "name", "args": {...}}; find names with {"search": "words"}`))
	case a.Connect != "":
		return m.connect(ctx, a.Connect)
	case a.Describe != "":
		notes := m.syncPeers(ctx, false)
		return withNotes(m.describe(a.Describe), notes)
	case a.Instructions != "":
		notes := m.syncPeers(ctx, false)
		return withNotes(m.instructions(a.Instructions), notes)
	case a.Search != nil && a.Server == "":
		notes := m.syncPeers(ctx, false)
		return withNotes(m.search(ctx, *a), notes)
	case a.Search != nil:
		return m.search(ctx, *a)
	case a.Server != "":
		return m.list(ctx, a.Server)
	}
	return m.status(ctx)
}

// connects reports whether the mode a selects (in dispatch's order) may
// connect a server: a call, a connect, or a list (also an empty search
// naming a server) of an enabled server whose tools are not known yet.
func (m *MCP) connects(a *mcpArgs) bool {
	switch {
	case a.Action != "":
		return a.Action == "auth-start" || a.Action == "auth-complete" // they need the live runtime
	case a.Tool != "" || a.Read != "":
		return true
	case hasArgs(a):
		return false
	case a.Connect != "":
		return true
	case a.Describe != "" || a.Instructions != "":
		return false
	case a.Search != nil && strings.TrimSpace(*a.Search) != "":
		return false
	case a.Server != "":
		return m.configured(a.Server) == nil && !m.catalogOf(a.Server).Known()
	}
	return false
}

// knownFields are mcpArgs' JSON names.
var knownFields = map[string]bool{"tool": true, "args": true, "connect": true, "describe": true, "instructions": true,
	"search": true, "regex": true, "includeSchemas": true, "limit": true, "offset": true, "server": true, "read": true, "action": true}

// unknownFields refuses a field the schema does not have (a model that
// nested its arguments wrongly learns it at once).
func unknownFields(raw json.RawMessage) *messages.Error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return nil
	}
	for k := range fields {
		if !knownFields[k] {
			return messages.Errorf(messages.KindInvalidArgs, "", "unknown field %s; to pass arguments to a tool use {\"tool\": \"name\", \"args\": {...}}", quote(k))
		}
	}
	return nil
}

// failure renders an error as a tool result with its stable code.
func failure(err *messages.Error) Result {
	details := map[string]any{"error": err.Code(), "message": err.Error()}
	if err.Server != "" {
		details["server"] = err.Server
	}
	if err.RetryAfter > 0 {
		details["retryAfterSeconds"] = int((err.RetryAfter + 999_999_999) / 1_000_000_000)
	}
	if err.RPCCode != 0 {
		details["rpcCode"] = err.RPCCode
	}
	if len(err.ServerStderr) > 0 {
		// For the host and the person only: the model reads Text.
		details["serverStderr"] = err.ServerStderr
	}
	// A server's error message is server text: no controls reach the model.
	return Result{Text: catalog.CleanText("Error: " + err.Error()), Details: details, IsError: true}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// oneLine folds whitespace runs (newlines included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to n runes with an ellipsis.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
