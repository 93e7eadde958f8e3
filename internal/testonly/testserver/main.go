package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcprt/mcprt/internal/eventsrv"
	"github.com/mcprt/mcprt/internal/mcpline"
)

// EnvArgs names the environment variable that turns a process calling
// [MainIfRequested] into the test server. Its value is the server's command
// line, split on white space.
const EnvArgs = "MCPRT_TESTSERVER_ARGS"

// EnvCancelLog names the environment variable holding the file the hang tool
// appends the line "cancelled" to when its call is cancelled.
const EnvCancelLog = "MCPRT_TEST_CANCEL_LOG"

// ModernOnlyMessage is the error message --modern-only answers initialize with.
const ModernOnlyMessage = "initialize is not supported: use server/discover"

// legacyMethods are the requests an --ignore-unknown server answers.
var legacyMethods = map[string]bool{
	string(mcp.MethodInitialize): true,
	string(mcp.MethodPing):       true,
	string(mcp.MethodToolsList):  true,
	string(mcp.MethodToolsCall):  true,
}

// config is the parsed command line.
type config struct {
	stdio         bool
	httpAddr      string
	sseAddr       string
	socketPath    string
	postStatus    int
	modernOnly    bool
	ignoreUnknown bool
	garbage       bool
	closeInputOn  string
	strayResponse bool
	pageSize      int
	extraTools    int
	instructions  string
	name          string
	script        string

	clientRequests bool

	events            bool
	eventsHeartbeatMs int
	eventsRetention   int
	eventsMaxAgeMs    int
	eventsState       string
	eventsPageSize    int
	eventsExtraTypes  int

	// methods are the custom methods every mode serves (set by Main).
	methods mcpline.Methods
}

// MainIfRequested runs the test server and exits the process when the
// environment variable [EnvArgs] is set; otherwise it returns at once. A test
// binary calls it first thing in TestMain so that tests can start the server
// by re-executing themselves. The variable is removed from the server's own
// environment, so the env and environ tools do not report it.
func MainIfRequested() {
	args, ok := os.LookupEnv(EnvArgs)
	if !ok {
		return
	}
	_ = os.Unsetenv(EnvArgs)
	os.Exit(Main(strings.Fields(args)))
}

// Main runs the test server with the given command line (without the program
// name) and returns the process exit status: 0 after a clean shutdown (end of
// stdin), 1 on a runtime error, 2 on a usage error.
func Main(args []string) int {
	cfg, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "testserver:", err)
		return 2
	}
	ev, err := newEvents(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		return 1
	}
	defer ev.Close()
	cfg.methods = ev.Add(exampleMethods())
	if cfg.script != "" {
		sc, err := loadScript(cfg.script)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			return 2
		}
		for k, h := range sc.methods() {
			cfg.methods[k] = h
		}
	}
	srv := newServer(cfg)
	if cfg.events {
		srv.AddTools(eventTools(ev)...)
	}
	if cfg.clientRequests {
		srv.AddTools(clientRequestTools()...)
	}
	ctx := context.Background()
	switch {
	case cfg.httpAddr != "":
		err = serveStreamable(ctx, cfg, srv)
	case cfg.sseAddr != "":
		err = serveSSE(ctx, cfg, srv)
	case cfg.socketPath != "":
		err = serveSocket(ctx, cfg, srv)
	default:
		err = serveStdio(ctx, cfg, srv)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		return 1
	}
	return 0
}

func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.BoolVar(&cfg.stdio, "stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout (the default)")
	fs.StringVar(&cfg.httpAddr, "http", "", "serve Streamable HTTP at http://ADDR/mcp (ADDR on 127.0.0.1)")
	fs.StringVar(&cfg.sseAddr, "sse", "", "serve legacy HTTP+SSE at http://ADDR/mcp (ADDR on 127.0.0.1)")
	fs.StringVar(&cfg.socketPath, "socket", "", "serve newline-delimited JSON-RPC on a Unix socket at PATH")
	fs.IntVar(&cfg.postStatus, "post-status", 0, "with --http: answer every POST with this HTTP status and no body; with --sse: answer POST on /mcp with it instead of 405")
	fs.BoolVar(&cfg.modernOnly, "modern-only", false, "refuse initialize; only server/discover negotiates")
	fs.BoolVar(&cfg.ignoreUnknown, "ignore-unknown", false, "never answer requests for unimplemented methods")
	fs.BoolVar(&cfg.garbage, "garbage", false, "with stdio: write a non-JSON line before serving")
	fs.BoolVar(&cfg.strayResponse, "stray-response", false, "with stdio: write a response to a request never sent (id \"stray-1\") before serving")
	fs.StringVar(&cfg.closeInputOn, "close-input-on", "", "with --stdio or --socket: close the input (stdin; a socket's read side) when a request of this method arrives, before answering it")
	fs.IntVar(&cfg.pageSize, "page-size", 0, "tools/list page size (0: no pagination)")
	fs.IntVar(&cfg.extraTools, "extra-tools", 0, "add N dummy tools named extra_000...")
	fs.StringVar(&cfg.instructions, "instructions", "", "server instructions")
	fs.StringVar(&cfg.name, "name", "testserver", "server name")
	fs.StringVar(&cfg.script, "script", "", "serve the catalog and answers of this JSON file (Script) instead of the built-in tools")
	fs.BoolVar(&cfg.clientRequests, "client-requests", false, "add the tools that ask the client (ask_roots, ask_name, ask_roots_later, last_roots)")
	fs.BoolVar(&cfg.events, "events", false, "add the events tools (events_emit, events_fault, events_arm, events_streams)")
	fs.IntVar(&cfg.eventsHeartbeatMs, "events-heartbeat-ms", 30000, "heartbeat interval of event streams (0: none)")
	fs.IntVar(&cfg.eventsRetention, "events-retention", eventsrv.DefaultMaxEvents, "occurrences retained per event type")
	fs.IntVar(&cfg.eventsMaxAgeMs, "events-max-age-ms", 0, "retention age of occurrences (0: the default, a day)")
	fs.StringVar(&cfg.eventsState, "events-state", "", "directory keeping the event logs across restarts")
	fs.IntVar(&cfg.eventsPageSize, "events-page-size", 0, "events/list page size (0: one page)")
	fs.IntVar(&cfg.eventsExtraTypes, "events-extra-types", 0, "add N event types named extra.000...")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	modes := 0
	for _, set := range []bool{cfg.httpAddr != "", cfg.sseAddr != "", cfg.socketPath != ""} {
		if set {
			modes++
		}
	}
	switch {
	case modes > 1 || (modes == 1 && cfg.stdio):
		return cfg, errors.New("choose one of --stdio, --http, --sse and --socket")
	case cfg.postStatus != 0 && cfg.httpAddr == "" && cfg.sseAddr == "":
		return cfg, errors.New("--post-status needs --http or --sse")
	case cfg.postStatus != 0 && (cfg.postStatus < 100 || cfg.postStatus > 599):
		return cfg, fmt.Errorf("--post-status %d is not an HTTP status", cfg.postStatus)
	case cfg.strayResponse && modes > 0:
		return cfg, errors.New("--stray-response works only with --stdio")
	case cfg.garbage && modes > 0:
		return cfg, errors.New("--garbage works only with --stdio")
	case cfg.closeInputOn != "" && (cfg.httpAddr != "" || cfg.sseAddr != ""):
		return cfg, errors.New("--close-input-on works only with --stdio and --socket")
	case cfg.ignoreUnknown && (cfg.httpAddr != "" || cfg.sseAddr != ""):
		return cfg, errors.New("--ignore-unknown works only with --stdio and --socket")
	case cfg.modernOnly && cfg.sseAddr != "":
		return cfg, errors.New("--modern-only does not work with --sse")
	case cfg.pageSize < 0 || cfg.extraTools < 0:
		return cfg, errors.New("--page-size and --extra-tools must not be negative")
	case cfg.eventsHeartbeatMs < 0 || cfg.eventsRetention < 1 || cfg.eventsMaxAgeMs < 0 || cfg.eventsPageSize < 0 || cfg.eventsExtraTypes < 0:
		return cfg, errors.New("--events-retention must be positive, the other --events-* numbers not negative")
	}
	return cfg, nil
}

// filter returns the request filter the stdio and socket loops apply; in
// is the connection's input when --close-input-on is set.
func (cfg config) filter(in *inputCloser) mcpline.Filter {
	if !cfg.modernOnly && !cfg.ignoreUnknown && in == nil {
		return nil
	}
	return func(method string, id json.RawMessage) (any, bool) {
		if in != nil && method == cfg.closeInputOn {
			in.shut()
		}
		if cfg.modernOnly && method == string(mcp.MethodInitialize) {
			return mcpline.NewErrorReply(id, mcp.METHOD_NOT_FOUND, ModernOnlyMessage), true
		}
		if cfg.ignoreUnknown && !legacyMethods[method] {
			return nil, true
		}
		return nil, false
	}
}

func serveStdio(ctx context.Context, cfg config, srv *server.MCPServer) error {
	if cfg.garbage {
		if _, err := io.WriteString(os.Stdout, "this is not json\n"); err != nil {
			return err
		}
	}
	if cfg.strayResponse {
		if _, err := io.WriteString(os.Stdout, `{"jsonrpc":"2.0","id":"stray-1","result":{}}`+"\n"); err != nil {
			return err
		}
	}
	if cfg.closeInputOn != "" {
		in, err := stdinCloser()
		if err != nil {
			return err
		}
		return mcpline.ServeWith(ctx, mcpgoBackend{srv}, tapWire(in), os.Stdout, cfg.lineOptions("stdio", in))
	}
	return mcpline.ServeWith(ctx, mcpgoBackend{srv}, tapWire(os.Stdin), os.Stdout, cfg.lineOptions("stdio", nil))
}

// lineOptions returns the options of one stdio or socket connection; in is
// its closable input under --close-input-on, else nil.
func (cfg config) lineOptions(sessionID string, in *inputCloser) mcpline.Options {
	return mcpline.Options{SessionID: sessionID, Filter: cfg.filter(in), Methods: cfg.methods}
}

// stdinClosed returns a channel closed when stdin reaches end of file. When
// stdin is not a pipe or socket (for example /dev/null or a terminal) the
// channel is never closed: the server then runs until it is killed.
func stdinClosed() <-chan struct{} {
	ch := make(chan struct{})
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return ch
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(ch)
	}()
	return ch
}
