package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/demoserver"
)

func demoServerCmd(g *globals) *cobra.Command {
	var httpAddr, root, stateDir string
	var heartbeat, poll time.Duration
	cmd := &cobra.Command{
		Use: "demo-server", Short: "run the built-in demo MCP server (stdio, or Streamable HTTP with --http)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := demoserver.Options{Root: root, Name: "mcprt-demo", Version: mcprt.Version,
				StateDir: stateDir, Heartbeat: heartbeat, Poll: poll}
			if httpAddr == "" {
				return demoserver.ServeStdio(cmd.Context(), os.Stdin, os.Stdout, opts)
			}
			err := demoserver.ServeHTTP(cmd.Context(), httpAddr, opts, func(url string) {
				if g.json {
					fmt.Fprintln(g.stdout, compact(map[string]string{"listening": url}))
					return
				}
				fmt.Fprintln(g.stdout, "demo server listening on "+url)
			})
			if err != nil && cmd.Context().Err() == nil {
				return usage("%s", err.Error())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve Streamable HTTP on this 127.0.0.1 address instead of stdio")
	cmd.Flags().StringVar(&root, "root", "", "directory read_file may read and fs.changed watches (default: the working directory)")
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "directory keeping the event logs, so a restarted server replays from old cursors")
	cmd.Flags().DurationVar(&heartbeat, "heartbeat", 0, "interval of event stream heartbeats (default 30s; negative: none)")
	cmd.Flags().DurationVar(&poll, "poll", 0, "how often fs.changed scans the root (default 250ms)")
	return cmd
}

// demoCmd is the zero-configuration tour: it starts the built-in demo
// server as a child process over stdio and uses it through the runtime
// exactly as an agent would.
func demoCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "demo", Short: "a zero-configuration tour on the built-in demo server", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.json {
				return usage("demo is a guided tour for people; it has no --json form (docs/cli.md)")
			}
			if g.attach != "" {
				return usage("demo runs a demo server of its own; leave out --attach")
			}
			self, err := os.Executable()
			if err != nil {
				return failed("cannot find this program's own path to start the demo server")
			}
			dir, err := os.MkdirTemp("", "mcprt-demo-")
			if err != nil {
				return failed("cannot create a scratch directory for the demo")
			}
			defer os.RemoveAll(dir)
			note := filepath.Join(dir, "hello.txt")
			if err := os.WriteFile(note, []byte("Hello from a file the demo server read for mcprt.\n"), 0o600); err != nil {
				return failed("cannot write the demo's sample file")
			}
			state, err := os.MkdirTemp("", "mcprt-demo-state-")
			if err != nil {
				return failed("cannot create a state directory for the demo")
			}
			defer os.RemoveAll(state)
			host := newDemoHost(cliHost{w: g.stderr})
			o := mcprt.Options{Host: host, Config: &config.File{MCPServers: map[string]config.Server{
				"demo": {Command: self, Args: []string{"demo-server", "--root", dir, "--state-dir", state}},
			}}}
			if g.verbose {
				o.Logger = nil
			}
			start := time.Now()
			rt, err := mcprt.Start(cmd.Context(), o)
			if err != nil {
				return failed(err.Error())
			}
			defer g.closeRuntime(rt)
			say := func(format string, args ...any) { fmt.Fprintf(g.stdout, format+"\n", args...) }
			mcp, _ := rt.Tool(mcprt.MCPToolName)
			step := func(title string, args map[string]any) (mcprt.Result, error) {
				b, _ := json.Marshal(args)
				say("\n$ mcp %s   # %s", b, title)
				r := mcp.Execute(cmd.Context(), b)
				say("%s", indent(r.Text))
				return r, resultError(r)
			}
			say("mcprt demo: one proxy tool, \"mcp\", in front of the built-in demo server (started as a child process over stdio).")
			if _, err := step("status: nothing is connected yet, servers are lazy", map[string]any{}); err != nil {
				return err
			}
			if _, err := step("list the demo server's tools (this starts it)", map[string]any{"server": "demo"}); err != nil {
				return err
			}
			if _, err := step("call a tool", map[string]any{"tool": "echo", "args": map[string]any{"message": "hello, MCP"}}); err != nil {
				return err
			}
			if _, err := step("arguments may also be a JSON string", map[string]any{"tool": "add", "args": `{"a": 2, "b": 40}`}); err != nil {
				return err
			}
			if _, err := step("read a file inside the server's root", map[string]any{"tool": "read_file", "args": map[string]any{"path": "hello.txt"}}); err != nil {
				return err
			}
			r, _ := step("a bad call gets a clear error, never a crash", map[string]any{"tool": "no_such_tool"})
			if r.ErrorCode() != "tool_not_found" {
				return failed("the demo expected tool_not_found for an unknown tool")
			}
			if _, err := step("status again: connected", map[string]any{}); err != nil {
				return err
			}
			tour := &eventsTour{ctx: cmd.Context(), rt: rt, host: host, dir: dir, say: say, seen: map[string]int{}}
			if err := tour.run(); err != nil {
				return err
			}
			say("\nDone in %s. Closing the runtime stops the server and reaps its process.", time.Since(start).Round(time.Millisecond))
			say("%s", ownServers)
			return nil
		},
	}
}

// ownServers ends the demo: how to do the same with one's own servers.
const ownServers = `
Now with your own servers:
  runtime config detect           # the MCP servers Claude Code, Cursor, VS Code, Codex... already have
  runtime config detect --write   # use them here (adds those hosts to your imports; writes nothing else)
  runtime status                  # every server, nothing started yet
  runtime list SERVER             # a server's tools
  runtime call TOOL '{"arg": 1}'  # call one
Or write a .mcp.json in your project: {"mcpServers": {"NAME": {"command": "npx", "args": ["-y", "PACKAGE"]}}}.
docs/config.md has every file and field.`

func indent(s string) string {
	out := ""
	for i, line := range splitLines(s) {
		if i > 0 {
			out += "\n"
		}
		out += "  " + line
	}
	return out
}

func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines = append(lines, s[start:i])
			start = i + 1
		}
	}
	return append(lines, s[start:])
}
