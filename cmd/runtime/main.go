package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/google/shlex"
	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usage(format string, args ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, args...)}
}

func failed(msg string) error { return &exitError{code: 1, msg: msg} }

// globals are the flags every command takes.
type globals struct {
	client  clientFlags
	config  string
	url     string
	stdio   string
	attach  string     // --attach ADDR: a shared runtime (serve.go)
	tls     tlsFlags   // --tls-*: mutual TLS with it (tls_flags.go)
	serving bool       // the command is serve (it takes --tls-cert and --tls-key)
	asker   *hostAsker // runtime session --ask-host: the host answers servers' questions
	json    bool
	verbose bool
	oauth   oauthFlags // auth_flags.go
	stdout  io.Writer
	stderr  io.Writer
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	ctx, interrupted, stop := interruptible()
	defer stop()
	// Human output is escaped for the terminal (termescape.go); stdout is
	// exact under --json.
	g := &globals{}
	out := &termWriter{w: stdout, raw: func() bool { return g.json }}
	errOut := &termWriter{w: stderr}
	defer out.flush()
	defer errOut.flush()
	stdout, stderr = out, errOut
	g.stdout, g.stderr = stdout, stderr
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	// Every command has closed its runtime (stopping and reaping its
	// servers) before ExecuteContext returns, so an interrupt's exit code
	// is given only after the children are gone.
	if code, ok := interrupted(); ok {
		return code
	}
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "runtime: "+oneLine(ee.msg))
		}
		return ee.code
	}
	// cobra's own errors (unknown flag, wrong argument count).
	fmt.Fprintln(stderr, "runtime: "+oneLine(err.Error()))
	return 2
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "runtime",
		Short:         "mcprt demo CLI: connect to MCP servers and use them as an agent would",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetVersionTemplate("runtime {{.Version}}\n")
	f := root.PersistentFlags()
	f.StringVar(&g.config, "config", "", "read only this configuration file")
	f.StringVar(&g.url, "url", "", `use one ad-hoc Streamable HTTP server named "adhoc" (SSE fallback)`)
	f.StringVar(&g.stdio, "stdio", "", `use one ad-hoc stdio server named "adhoc": "CMD ARGS", split with shell quoting`)
	f.StringVar(&g.attach, "attach", "", "use the shared runtime `runtime serve` runs at ADDR (host:port) instead of starting servers here")
	f.BoolVar(&g.json, "json", false, "print machine-readable JSON")
	f.BoolVarP(&g.verbose, "verbose", "v", false, "log diagnostics to stderr")
	g.client.register(root)
	g.tls.register(root)
	addOAuthFlags(root, &g.oauth)
	root.AddCommand(authCmd(g))
	root.AddCommand(statusCmd(g), listCmd(g), callCmd(g), toolCmd(g), connectCmd(g), demoCmd(g), demoServerCmd(g), eventsCmd(g), sessionCmd(g), serveCmd(g))
	root.AddCommand(configCommands(g)...)
	root.AddCommand(proxyCommands(g)...)
	g.completions(root)
	strictGroups(root)
	return root
}

// checkURL refuses an --url that is not an absolute http or https URL.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usage("--url needs an http or https URL, e.g. --url http://127.0.0.1:8080/mcp")
	}
	return nil
}

// options builds the runtime's Options from the flags.
func (g *globals) options() (mcprt.Options, error) {
	var o mcprt.Options
	if g.attach != "" {
		// Commands that support --attach branch before options (serve.go).
		return o, usage("this command does not support --attach: it works on this machine's configuration or tokens (call, tool, status, list, connect, search, describe, instructions, prompts, prompt, resources, read, events and session work attached)")
	}
	if g.tls.set() && !g.serving {
		return o, usage("--tls-ca, --tls-cert, --tls-key and --attach-listen go with --attach (the first three also with serve)")
	}
	hooks, err := g.clientHooks()
	if err != nil {
		return o, err
	}
	o.Client = hooks
	if g.verbose {
		o.Logger = slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	set := 0
	for _, v := range []string{g.config, g.url, g.stdio} {
		if v != "" {
			set++
		}
	}
	if set > 1 {
		return o, usage("use only one of --config, --url and --stdio")
	}
	switch {
	case g.url != "":
		if err := checkURL(g.url); err != nil {
			return o, err
		}
		o.Config = &config.File{MCPServers: map[string]config.Server{adhoc: {URL: g.url}}}
	case g.stdio != "":
		words, err := shlex.Split(g.stdio)
		if err != nil || len(words) == 0 {
			return o, usage("--stdio needs a command line, e.g. --stdio \"npx -y some-server\"")
		}
		o.Config = &config.File{MCPServers: map[string]config.Server{adhoc: {Command: words[0], Args: words[1:]}}}
	default:
		o.ConfigPath = g.config
	}
	if err := g.oauth.apply(&o, g.url, func(s string) { fmt.Fprintln(g.stderr, s) }); err != nil {
		return o, err
	}
	return o, nil
}

const adhoc = "adhoc"

// start starts a runtime and reports configuration problems as usage
// errors (exit 2).
func (g *globals) start(ctx context.Context) (*mcprt.Runtime, error) {
	return g.startWrapped(ctx, nil)
}

// startWrapped is start with the host wrap makes from the CLI's own (nil:
// the CLI's own).
func (g *globals) startWrapped(ctx context.Context, wrap func(cliHost) mcprt.Host) (*mcprt.Runtime, error) {
	o, err := g.options()
	if err != nil {
		return nil, err
	}
	h := g.host(o)
	o.Host = h
	if wrap != nil {
		o.Host = wrap(h)
	}
	rt, err := mcprt.Start(ctx, o)
	if err != nil {
		return nil, usage("%s", err.Error())
	}
	return rt, nil
}

// cliHost prints notices on stderr, one line each: configuration
// warnings, and the stderr of servers configured with debug: true.
type cliHost struct {
	w        io.Writer
	imports  *importFilter    // nil: print every warning
	progress *installProgress // nil: install notices are plain lines
}

func (h cliHost) Deliver(context.Context, messages.HostMessage) {}

func (h cliHost) Notify(_ context.Context, n messages.Notice) {
	if n.Level >= messages.NoticeWarning && !h.imports.filter(h, n.Text) {
		return
	}
	if n.Level < messages.NoticeWarning && h.progress.notice(h.w, n.Server, n.Text) {
		return
	}
	switch {
	case n.Level >= messages.NoticeWarning && n.Server != "" && !strings.HasPrefix(n.Text, fmt.Sprintf("server %q", n.Server)):
		// Name the server, as the reference does ("<server>: <text>"),
		// unless the text already does.
		fmt.Fprintf(h.w, "runtime: warning: %s: %s\n", n.Server, oneLine(n.Text))
	case n.Level >= messages.NoticeWarning:
		fmt.Fprintln(h.w, "runtime: warning: "+oneLine(n.Text))
	case n.Server != "":
		fmt.Fprintf(h.w, "runtime: %s: %s\n", n.Server, oneLine(n.Text))
	default:
		fmt.Fprintln(h.w, "runtime: "+oneLine(n.Text))
	}
}

// closeRuntime closes rt, reporting a failed shutdown without hiding the
// command's own error.
func (g *globals) closeRuntime(rt *mcprt.Runtime) {
	if err := rt.Close(); err != nil {
		fmt.Fprintln(g.stderr, "runtime: warning: "+oneLine(err.Error()))
	}
}

// resultError maps a tool result to the command's outcome.
func resultError(r mcprt.Result) error {
	if !r.IsError {
		return nil
	}
	msg := r.Text
	if m, ok := r.Details["message"].(string); ok {
		msg = m
	}
	msg = strings.TrimPrefix(msg, "Error: ")
	msg += stderrSuffix(r.Details["serverStderr"])
	switch r.ErrorCode() {
	case messages.KindInvalidArgs.Code(), messages.KindServerNotFound.Code(), messages.KindConfig.Code():
		return usage("%s", msg)
	}
	return failed(msg)
}

// stderrSuffix renders the last stderr lines of a failed server (already
// bounded and masked by the runtime) for the one-line error.
func stderrSuffix(v any) string {
	var lines []string
	switch l := v.(type) {
	case []string:
		lines = l
	case []any:
		for _, x := range l {
			if s, ok := x.(string); ok {
				lines = append(lines, s)
			}
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "; server stderr: " + strings.Join(lines, " | ")
}
