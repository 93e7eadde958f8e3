package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// proxyCommands are the proxy tool's modes that the core commands (status,
// list, call, connect) do not cover: search, describe, instructions, and
// the prompts a host offers as commands.
func proxyCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{searchCmd(g), describeCmd(g), instructionsCmd(g), promptsCmd(g), promptCmd(g), resourcesCmd(g), readCmd(g)}
}

func searchCmd(g *globals) *cobra.Command {
	var server string
	var limit, offset int
	var regex, noSchemas bool
	c := &cobra.Command{
		Use: "search QUERY...", Short: "search every server's tools (from the cache; connects nothing)", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fields := map[string]any{"search": strings.Join(args, " ")}
			if server != "" {
				fields["server"] = server
			}
			if limit > 0 {
				fields["limit"] = limit
			}
			if offset > 0 {
				fields["offset"] = offset
			}
			if regex {
				fields["regex"] = true
			}
			if noSchemas {
				fields["includeSchemas"] = false
			}
			return g.proxyMode(cmd, func([]string) json.RawMessage { return mcpArgs(fields) })
		},
	}
	c.Flags().StringVar(&server, "server", "", "search only this server's tools")
	c.Flags().IntVar(&limit, "limit", 0, "results per page (default 12)")
	c.Flags().IntVar(&offset, "offset", 0, "results to skip")
	c.Flags().BoolVar(&regex, "regex", false, "QUERY is a regular expression (RE2)")
	c.Flags().BoolVar(&noSchemas, "no-schemas", false, "leave out the parameters")
	return c
}

func describeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "describe TOOL", Short: "show a tool's description and parameters (from the cache; connects nothing)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.proxyMode(cmd, func([]string) json.RawMessage { return mcpArgs(map[string]any{"describe": args[0]}) })
		},
	}
}

func instructionsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "instructions SERVER", Short: "show a server's usage instructions", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.proxyMode(cmd, func([]string) json.RawMessage { return mcpArgs(map[string]any{"instructions": args[0]}) })
		},
	}
}

func promptsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "prompts", Short: "list the known prompts of every server (from the cache; connects nothing)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withEither(cmd, nil, func(rt cliRuntime) error {
				ps := rt.Prompts()
				if g.json {
					if ps == nil {
						ps = []mcprt.PromptInfo{}
					}
					return g.printJSON(ps)
				}
				if len(ps) == 0 {
					fmt.Fprintln(g.stdout, "no prompts known (connect a server to list its prompts)")
				}
				for _, p := range ps {
					var args []string
					for _, a := range p.Arguments {
						if a.Required {
							args = append(args, a.Name)
						} else {
							args = append(args, a.Name+"?")
						}
					}
					fmt.Fprintf(g.stdout, "%s %s(%s) %s\n", p.Server, p.Name, strings.Join(args, ", "), oneLine(p.Description))
				}
				return nil
			})
		},
	}
}

func promptCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "prompt SERVER NAME [VALUE | ARG=VALUE...]", Short: "render a server's prompt with arguments (positional, in declaration order, or by name)", Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withEither(cmd, nil, func(rt cliRuntime) error {
				res, err := rt.GetPromptWords(cmd.Context(), args[0], args[1], args[2:])
				switch k := messages.KindOf(err); {
				case err == nil:
				case k == messages.KindInvalidArgs || k == messages.KindServerNotFound || k == messages.KindConfig:
					return usage("%s", err.Error())
				default:
					return failed(err.Error())
				}
				if g.json {
					if res.Messages == nil {
						res.Messages = []mcprt.PromptMessage{}
					}
					return g.printJSON(res)
				}
				fmt.Fprintln(g.stdout, res.Text)
				return nil
			})
		},
	}
}
