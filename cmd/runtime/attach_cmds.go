package main

import (
	"context"
	"sort"
	"time"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/remote"
)

// cliRuntime is what the commands that work the same attached (--attach)
// need: an embedded *mcprt.Runtime or a *remote.Session.
type cliRuntime interface {
	toolRuntime
	Prompts() []mcprt.PromptInfo
	GetPromptWords(ctx context.Context, server, name string, words []string) (mcprt.PromptResult, error)
}

// withEither runs f with a session attached to the shared runtime
// (--attach) or a runtime of its own. wrap, when set, makes the host that
// receives deliveries and notices from the CLI's own (which prints
// notices on stderr).
func (g *globals) withEither(cmd *cobra.Command, wrap func(cliHost) mcprt.Host, f func(rt cliRuntime) error) error {
	if g.attach != "" {
		var host mcprt.Host
		if wrap != nil {
			host = wrap(cliHost{w: g.stderr})
		}
		s, err := g.attachSession(cmd.Context(), host)
		if err != nil {
			return err
		}
		defer s.Close()
		g.announceIssues(cmd.Context(), s, host)
		return f(s)
	}
	rt, err := g.startWrapped(cmd.Context(), wrap)
	if err != nil {
		return err
	}
	defer g.closeRuntime(rt)
	return f(rt)
}

// announceIssues tells host (nil: the CLI's, on stderr) the shared
// runtime's configuration issues, as a runtime of its own tells them when
// it starts.
func (g *globals) announceIssues(ctx context.Context, s *remote.Session, host mcprt.Host) {
	if host == nil {
		host = cliHost{w: g.stderr}
	}
	for _, is := range s.ConfigIssues() {
		host.Notify(ctx, messages.Notice{Level: messages.NoticeWarning, Server: is.Server, Text: is.String()})
	}
}

// completionWait bounds how long completing waits for the shared runtime.
const completionWait = 3 * time.Second

// attachedNames are the shared runtime's servers and, when withTools, the
// tools its catalog knows (plain and prefixed with their server's), for
// completion with --attach; nothing when it cannot be reached. It
// connects nothing.
func (g *globals) attachedNames(withTools bool) (servers, tools []string) {
	ctx, cancel := context.WithTimeout(context.Background(), completionWait)
	defer cancel()
	s, err := g.attachSession(ctx, silentHost{})
	if err != nil {
		return nil, nil
	}
	defer s.Close()
	servers = s.Servers()
	if !withTools {
		return servers, nil // completing a server: no listing of each one's tools
	}
	seen := map[string]bool{}
	for _, server := range servers {
		list, _ := s.ServerTools(server)
		for _, t := range list {
			for _, n := range []string{t.Name, config.ToolPrefix(server) + "_" + t.Name} {
				if !seen[n] {
					seen[n] = true
					tools = append(tools, n)
				}
			}
		}
	}
	sort.Strings(tools)
	return servers, tools
}

// silentHost drops everything: completing prints nothing but names.
type silentHost struct{}

func (silentHost) Deliver(context.Context, messages.HostMessage) {}
func (silentHost) Notify(context.Context, messages.Notice)       {}
