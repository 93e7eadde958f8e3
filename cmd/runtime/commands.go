package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
)

// runTool runs one agent-facing tool exactly as a model would and prints
// its result.
func (g *globals) runTool(cmd *cobra.Command, rt toolRuntime, name string, args json.RawMessage) error {
	t, ok := rt.Tool(name)
	if !ok {
		var names []string
		for _, t := range rt.Tools() {
			names = append(names, t.Name)
		}
		return usage("no tool named %q (tools: %s)", name, strings.Join(names, ", "))
	}
	r := t.Execute(cmd.Context(), args)
	g.print(r)
	return resultError(r)
}

// print writes a result: its text, or with --json the whole result. A
// failed result's text goes to stderr as the error line instead.
func (g *globals) print(r mcprt.Result) {
	if g.json {
		_ = g.printJSON(r)
		return
	}
	if !r.IsError {
		fmt.Fprintln(g.stdout, r.Text)
	}
}

// withRuntime starts a runtime, runs f and closes the runtime.
func (g *globals) withRuntime(cmd *cobra.Command, f func(rt *mcprt.Runtime) error) error {
	rt, err := g.start(cmd.Context())
	if err != nil {
		return err
	}
	defer g.closeRuntime(rt)
	return f(rt)
}

// proxyMode runs one of the proxy tool's modes; args builds its arguments
// from the configured server names. A mode that connects nothing, when
// starting the runtime would connect nothing either, is answered by the
// configuration and the metadata cache alone (mcprt.CacheView: the
// runtime's own answer, without starting actors, which is what makes
// `runtime status` fast); anything else starts the runtime.
func (g *globals) proxyMode(cmd *cobra.Command, args func(servers []string) json.RawMessage) error {
	if g.attach != "" {
		return g.withTools(cmd, func(rt toolRuntime) error {
			return g.runTool(cmd, rt, mcprt.MCPToolName, args(rt.Servers()))
		})
	}
	o, err := g.options()
	if err != nil {
		return err
	}
	o.Host = g.host(o)
	view, err := mcprt.OpenCacheView(o)
	if err != nil {
		return usage("%s", err.Error())
	}
	if view != nil {
		if r, ok := view.Execute(cmd.Context(), args(view.Servers())); ok {
			g.print(r)
			return resultError(r)
		}
	}
	return g.withRuntime(cmd, func(rt *mcprt.Runtime) error {
		return g.runTool(cmd, rt, mcprt.MCPToolName, args(rt.Servers()))
	})
}

func mcpArgs(fields map[string]any) json.RawMessage {
	b, _ := json.Marshal(fields)
	return b
}

func statusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "status", Short: "show every configured server's status (connects nothing)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			servers := -1
			if err := g.proxyMode(cmd, func(names []string) json.RawMessage {
				servers = len(names)
				return json.RawMessage(`{}`)
			}); err != nil {
				return err
			}
			g.noServersHint(servers)
			return nil
		},
	}
}

func listCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "list [SERVER]", Short: "list a server's tools, templates and prompts (from the cache, else connecting it)", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.proxyMode(cmd, func(names []string) json.RawMessage {
				server := ""
				if len(args) == 1 {
					server = args[0]
				} else if len(names) == 1 {
					server = names[0]
				}
				if server == "" {
					return json.RawMessage(`{}`)
				}
				return mcpArgs(map[string]any{"server": server})
			})
		},
	}
}

func callCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "call TOOL [JSON]", Short: "call an MCP tool with JSON arguments", Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := json.RawMessage(`{}`)
			if len(args) == 2 {
				raw = json.RawMessage(args[1])
				if !json.Valid(raw) {
					return usage("the arguments of call must be JSON, e.g. '{\"message\": \"hi\"}'")
				}
				if trimmed := strings.TrimSpace(args[1]); !strings.HasPrefix(trimmed, "{") {
					return usage("the arguments of call must be a JSON object")
				}
			}
			return g.withTools(cmd, func(rt toolRuntime) error {
				return g.runTool(cmd, rt, mcprt.MCPToolName, mcpArgs(map[string]any{"tool": args[0], "args": raw}))
			})
		},
	}
}

func toolCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "tool NAME JSON", Short: "invoke an agent-facing tool exactly as a model would", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !json.Valid([]byte(args[1])) {
				return usage("the arguments of tool must be JSON")
			}
			return g.withTools(cmd, func(rt toolRuntime) error {
				return g.runTool(cmd, rt, args[0], json.RawMessage(args[1]))
			})
		},
	}
}

func connectCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "connect SERVER", Short: "connect (or reconnect) a server, list its catalog and cache it", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withTools(cmd, func(rt toolRuntime) error {
				return g.runTool(cmd, rt, mcprt.MCPToolName, mcpArgs(map[string]any{"connect": args[0]}))
			})
		},
	}
}
