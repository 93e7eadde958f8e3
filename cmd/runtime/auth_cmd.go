package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/auth"
)

// authCmd is `runtime auth login|status|logout`.
func authCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "auth", Short: "OAuth for remote servers: log in, show status, log out"}
	c.AddCommand(&cobra.Command{
		Use: "login SERVER", Short: "authorize a server now: opens the browser (or prints the URL with --no-browser) and waits on 127.0.0.1 for the redirect",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withAuthorizer(cmd, args[0], func(a *auth.Authorizer) error {
				if err := a.Login(cmd.Context(), a.Probe(cmd.Context())); err != nil {
					return failed(err.Error())
				}
				st, _ := a.Status()
				fmt.Fprintf(g.stdout, "%s: authorized (scope %q; token kept in the %s)\n", args[0], st.Scope, st.Store)
				return nil
			})
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "status [SERVER]", Short: "show which OAuth servers hold a token (never the token)",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return g.authStatus(cmd, args) },
	})
	c.AddCommand(&cobra.Command{
		Use: "logout SERVER", Short: "forget a server's token and client registration",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withAuthorizer(cmd, args[0], func(a *auth.Authorizer) error {
				if err := a.Logout(); err != nil {
					return failed(err.Error())
				}
				fmt.Fprintf(g.stdout, "%s: logged out\n", args[0])
				return nil
			})
		},
	})
	return c
}

// withAuthorizer runs f with the authorizer of a configured OAuth server.
func (g *globals) withAuthorizer(cmd *cobra.Command, server string, f func(a *auth.Authorizer) error) error {
	return g.withRuntime(cmd, func(rt *mcprt.Runtime) error {
		a := rt.Authorizer(server)
		if a == nil {
			if names := rt.AuthServers(); len(names) > 0 {
				return usage("server %q does not use OAuth (OAuth servers: %s)", server, strings.Join(names, ", "))
			}
			return usage("server %q does not use OAuth (no configured server has auth \"oauth\" or an oauth block)", server)
		}
		return f(a)
	})
}

// authStatus prints one line (or a JSON object) per OAuth server.
func (g *globals) authStatus(cmd *cobra.Command, args []string) error {
	return g.withRuntime(cmd, func(rt *mcprt.Runtime) error {
		names := rt.AuthServers()
		if len(args) == 1 {
			if rt.Authorizer(args[0]) == nil {
				return usage("server %q does not use OAuth", args[0])
			}
			names = args
		}
		out := map[string]any{}
		var firstErr error
		for _, n := range names {
			st, err := rt.Authorizer(n).Status()
			if err != nil {
				out[n] = map[string]string{"error": err.Error()}
				if firstErr == nil {
					firstErr = err
				}
				if !g.json {
					fmt.Fprintf(g.stdout, "%s: %s\n", n, err.Error())
				}
				continue
			}
			out[n] = st
			if g.json {
				continue
			}
			switch {
			case !st.Authorized:
				fmt.Fprintf(g.stdout, "%s: not authorized (runtime auth login %s)\n", n, n)
			default:
				exp := "no expiry"
				if !st.Expiry.IsZero() {
					exp = "expires " + st.Expiry.UTC().Format("2006-01-02 15:04 UTC")
				}
				fmt.Fprintf(g.stdout, "%s: authorized, scope %q, %s, refreshable %t (%s)\n", n, st.Scope, exp, st.Refreshable, st.Store)
			}
		}
		if g.json {
			b, _ := json.MarshalIndent(out, "", "  ")
			fmt.Fprintln(g.stdout, string(b))
		}
		if len(names) == 0 && !g.json {
			fmt.Fprintln(g.stdout, "no configured server uses OAuth")
		}
		if firstErr != nil {
			return failed("")
		}
		return nil
	})
}
