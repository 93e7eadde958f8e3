package main

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
)

// Shell completion: `runtime completion bash|zsh|fish|powershell` prints
// the script (cobra's); the scripts call `runtime __complete`, which
// completes commands and flags, and server and tool names from the
// configuration and the metadata cache. Completing never starts a server,
// never runs a secret's command and never writes a file. With --attach,
// the names are the shared runtime's: its servers and the tools its
// catalog knows (attachedNames), connecting nothing.

// completeServers completes a SERVER argument: the configured servers.
func (g *globals) completeServers(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return matching(g.configuredServers(), prefix), cobra.ShellCompDirectiveNoFileComp
}

// completeTools completes a TOOL argument: the tools the metadata cache
// knows, by their plain names and prefixed with their server's.
func (g *globals) completeTools(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return matching(g.cachedTools(), prefix), cobra.ShellCompDirectiveNoFileComp
}

func (g *globals) configuredServers() []string {
	if g.attach != "" {
		names, _ := g.attachedNames(false)
		return names
	}
	src, err := g.sources()
	if err != nil {
		return nil
	}
	eff, err := config.Load(src)
	if err != nil {
		return nil
	}
	var names []string
	for _, s := range eff.Servers {
		names = append(names, s.Name)
	}
	return names
}

func (g *globals) cachedTools() []string {
	if g.attach != "" {
		_, tools := g.attachedNames(true)
		return tools
	}
	o, err := g.options()
	if err != nil {
		return nil
	}
	view, err := mcprt.OpenCacheView(o)
	if err != nil || view == nil {
		return nil
	}
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, server := range view.Servers() {
		r, ok := view.Execute(context.Background(), mcpArgs(map[string]any{"server": server}))
		if !ok || r.IsError {
			continue
		}
		var d struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		b, _ := json.Marshal(r.Details)
		if json.Unmarshal(b, &d) != nil {
			continue
		}
		for _, t := range d.Tools {
			add(t.Name)
			add(config.ToolPrefix(server) + "_" + t.Name)
		}
	}
	sort.Strings(names)
	return names
}

func matching(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// completions attaches the argument completions to the commands.
func (g *globals) completions(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	servers := map[string]bool{"list": true, "connect": true, "instructions": true, "enable": true, "disable": true,
		"prompt": true, "catalog": true, "subscribe": true}
	toolsArg := map[string]bool{"call": true, "describe": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch {
		case servers[c.Name()]:
			c.ValidArgsFunction = g.completeServers
		case toolsArg[c.Name()]:
			c.ValidArgsFunction = g.completeTools
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
