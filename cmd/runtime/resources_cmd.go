package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
)

// resourceRow is one resource or resource template of `runtime resources`.
type resourceRow struct {
	Server      string `json:"server"`
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	// Tool is the tool that reads the resource (exposeResources), "" for a
	// template.
	Tool        string `json:"tool,omitempty"`
	Description string `json:"description,omitempty"`
}

// resources lists the resources and templates of servers, through the
// proxy tool's list and describe modes (the cache, else a connection).
func resources(ctx context.Context, mcp mcprt.Tool, servers []string) ([]resourceRow, error) {
	rows := []resourceRow{}
	for _, server := range servers {
		r := mcp.Execute(ctx, mcpArgs(map[string]any{"server": server}))
		if err := resultError(r); err != nil {
			return nil, err
		}
		var list struct {
			Tools []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"tools"`
			ResourceTemplates []struct {
				URITemplate string `json:"uriTemplate"`
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"resourceTemplates"`
		}
		b, _ := json.Marshal(r.Details)
		_ = json.Unmarshal(b, &list)
		for _, t := range list.Tools {
			d := mcp.Execute(ctx, mcpArgs(map[string]any{"describe": t.Name, "server": server}))
			if uri, ok := d.Details["uri"].(string); ok && !d.IsError {
				rows = append(rows, resourceRow{Server: server, URI: uri, Tool: t.Name, Description: t.Description})
			}
		}
		for _, t := range list.ResourceTemplates {
			desc := t.Description
			if desc == "" {
				desc = t.Name
			}
			rows = append(rows, resourceRow{Server: server, URITemplate: t.URITemplate, Description: desc})
		}
	}
	return rows, nil
}

func resourcesCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "resources [SERVER]", Short: "list the resources and resource templates of every server, or of one", Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: g.completeServers,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withEither(cmd, nil, func(rt cliRuntime) error {
				mcp, _ := rt.Tool(mcprt.MCPToolName)
				servers := rt.Servers()
				if len(args) == 1 {
					servers = args
				}
				rows, err := resources(cmd.Context(), mcp, servers)
				if err != nil {
					return err
				}
				if g.json {
					return g.printJSON(rows)
				}
				if len(rows) == 0 {
					fmt.Fprintln(g.stdout, "no resources known (servers list theirs when connected; exposeResources: false hides them)")
				}
				for _, r := range rows {
					if r.URITemplate != "" {
						fmt.Fprintf(g.stdout, "%s  %s  (template) %s\n", r.Server, r.URITemplate, oneLine(r.Description))
						continue
					}
					fmt.Fprintf(g.stdout, "%s  %s  %s\n", r.Server, r.URI, oneLine(r.Description))
				}
				return nil
			})
		},
	}
}

func readCmd(g *globals) *cobra.Command {
	var server string
	c := &cobra.Command{
		Use:   "read URI|TEMPLATE [NAME=VALUE...]",
		Short: "read a resource by its URI, or a resource template (its uriTemplate or name) expanded with NAME=VALUE arguments",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fields := map[string]any{"read": args[0]}
			if len(args) > 1 {
				vals := map[string]any{}
				for _, kv := range args[1:] {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return usage("template arguments are NAME=VALUE, not %q", safeWord(kv))
					}
					vals[k] = v
				}
				fields["args"] = vals
			}
			return g.withEither(cmd, nil, func(rt cliRuntime) error {
				switch {
				case server != "":
					fields["server"] = server
				case len(rt.Servers()) == 1:
					fields["server"] = rt.Servers()[0]
				}
				return g.runTool(cmd, rt, mcprt.MCPToolName, mcpArgs(fields))
			})
		},
	}
	c.Flags().StringVar(&server, "server", "", "the server whose resource it is (needed when several are configured)")
	return c
}
