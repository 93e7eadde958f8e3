package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcprt/mcprt/config"
)

// configAddCmd is `runtime config add NAME -- COMMAND ARGS...` or
// `runtime config add NAME --url URL`: one server entry written to the
// project's .mcp.json (or, with --scope user, ~/.config/mcp/mcp.json),
// keeping the file's comments and every other entry.
func configAddCmd(g *globals) *cobra.Command {
	var scope string
	var env []string
	var replace bool
	c := &cobra.Command{
		Use:   "add NAME (--url URL | -- COMMAND [ARGS...])",
		Short: "add a server to the project's .mcp.json (or --scope user), keeping the file's comments",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, rest := args[0], args[1:]
			entry := map[string]any{}
			switch {
			case g.config != "" || g.stdio != "":
				return usage("config add edits the standard files; it does not take --config or --stdio")
			case g.url != "" && len(rest) > 0:
				return usage("give either --url URL or -- COMMAND ARGS..., not both")
			case g.url != "":
				if err := checkURL(g.url); err != nil {
					return err
				}
				entry["url"] = g.url
			case len(rest) == 0 || cmd.ArgsLenAtDash() != 1:
				return usage("give the server's command after --, e.g. runtime config add %s -- npx -y PACKAGE, or --url URL", safeArg(name))
			default:
				entry["command"] = rest[0]
				if len(rest) > 1 {
					entry["args"] = rest[1:]
				}
			}
			if len(env) > 0 {
				vars := map[string]string{}
				for _, kv := range env {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return usage("--env takes NAME=VALUE")
					}
					vars[k] = v
				}
				entry["env"] = vars
			}
			url := g.url
			g.url = "" // the server's URL, not an ad-hoc server
			src, err := g.sources()
			g.url = url
			if err != nil {
				return err
			}
			path, err := config.AddTarget(src, scope)
			if err != nil {
				return usage("%s", err.Error())
			}
			current, err := readIfExists(path)
			if err != nil {
				return failed(err.Error())
			}
			data, err := config.AddServer(current, name, entry, replace)
			switch {
			case errors.Is(err, config.ErrServerExists):
				return usage("%s already declares a server named %q (use --replace to replace it)", path, name)
			case err != nil:
				return usage("%s: %s", path, err.Error())
			}
			if err := writeFileAtomic(path, data); err != nil {
				return failed(err.Error())
			}
			if g.json {
				return g.printJSON(map[string]any{"server": name, "file": path})
			}
			fmt.Fprintf(g.stdout, "added %s to %s\n", name, path)
			return nil
		},
	}
	c.Flags().StringVar(&scope, "scope", "project", "the file to write: project (./.mcp.json) or user (~/.config/mcp/mcp.json)")
	c.Flags().StringArrayVar(&env, "env", nil, "an environment variable for the server, NAME=VALUE (repeatable; ${VAR} references are kept)")
	c.Flags().BoolVar(&replace, "replace", false, "replace an entry of that name in the file")
	return c
}

// configRemoveCmd is `runtime config remove NAME`: the entry removed from
// every standard file that declares it, comments kept. Other hosts' files
// are never edited.
func configRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "remove a server from the standard files that declare it, keeping their comments (never other hosts' files)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			name := args[0]
			src, err := g.sources()
			if err != nil {
				return err
			}
			if src.Path != "" || src.Inline != nil {
				return usage("config remove edits the standard files; it does not take --config, --url or --stdio")
			}
			own, hosts, err := config.Declaring(src, name)
			if err != nil {
				return usage("%s", err.Error())
			}
			if len(own) == 0 {
				if len(hosts) > 0 {
					return usage("server %q comes from another host's file (%s), which mcprt never edits; use runtime disable %s", name, strings.Join(hosts, ", "), name)
				}
				return usage("no server named %q is configured", safeArg(name))
			}
			for _, path := range own {
				current, err := readIfExists(path)
				if err != nil {
					return failed(err.Error())
				}
				data, removed, err := config.RemoveServer(current, name)
				if err != nil {
					return failed(fmt.Sprintf("%s: %s", path, err))
				}
				if removed {
					if err := writeFileAtomic(path, data); err != nil {
						return failed(err.Error())
					}
				}
			}
			if g.json {
				return g.printJSON(map[string]any{"server": name, "files": own, "stillImportedFrom": orEmpty(hosts)})
			}
			fmt.Fprintf(g.stdout, "removed %s from %s\n", name, strings.Join(own, ", "))
			if len(hosts) > 0 {
				fmt.Fprintf(g.stdout, "%s is still imported from %s; runtime disable %s turns it off\n", name, strings.Join(hosts, ", "), name)
			}
			return nil
		},
	}
}
