package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// eventsCmd is `runtime events catalog|subscribe`: the mcp_events tool
// from the command line, printing every wakeup the host receives.
func eventsCmd(g *globals) *cobra.Command {
	root := &cobra.Command{Use: "events", Short: "MCP events: list a server's events, or subscribe and print the wakeups"}
	catalog := &cobra.Command{
		Use: "catalog SERVER", Short: "list a server's event types", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withEither(cmd, nil, func(rt cliRuntime) error {
				b, _ := json.Marshal(map[string]any{"action": "catalog", "server": args[0]})
				return g.runTool(cmd, rt, mcprt.EventsToolName, b)
			})
		},
	}
	var (
		forDur   time.Duration
		maxAgeMs int64
		cursor   string
	)
	subscribe := &cobra.Command{
		Use:   "subscribe SERVER EVENT [ARGUMENTS-JSON]",
		Short: "subscribe and print every wakeup as it arrives, until --for ends or Ctrl-C",
		Args:  cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			fields := map[string]any{"action": "subscribe", "server": args[0], "name": args[1]}
			if len(args) == 3 {
				var a map[string]any
				if err := json.Unmarshal([]byte(args[2]), &a); err != nil {
					return usage("the event's arguments must be a JSON object: %s", err)
				}
				fields["arguments"] = a
			}
			if cmd.Flags().Changed("max-age-ms") {
				if maxAgeMs < 0 {
					return usage("--max-age-ms must not be negative")
				}
				fields["max_age_ms"] = maxAgeMs
			}
			if cmd.Flags().Changed("cursor") {
				fields["cursor"] = cursor
			}
			return g.subscribe(cmd, fields, forDur)
		},
	}
	subscribe.Flags().DurationVar(&forDur, "for", 0, "stop after this long (default: until Ctrl-C)")
	subscribe.Flags().Int64Var(&maxAgeMs, "max-age-ms", 0, "replay at most this old (milliseconds)")
	subscribe.Flags().StringVar(&cursor, "cursor", "", "replay from this cursor")
	root.AddCommand(catalog, subscribe)
	return root
}

// printHost prints every wakeup and notice as it arrives; with --json,
// each wakeup is one JSON line.
type printHost struct {
	cliHost
	mu   sync.Mutex
	out  io.Writer
	json bool
}

// subscribeLine is one line of `events subscribe --json`: the
// subscription's acknowledgement ("subscribed", with the tool's result) or
// a wakeup the host received ("wakeup": its kind and the text the model
// reads). docs/json/events-subscribe.schema.json.
type subscribeLine struct {
	Type        string        `json:"type"`
	Result      *mcprt.Result `json:"result,omitempty"`
	Kind        string        `json:"kind,omitempty"`
	Text        string        `json:"text,omitempty"`
	TriggerTurn bool          `json:"triggerTurn,omitempty"`
}

func (h *printHost) Deliver(_ context.Context, m messages.HostMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.json {
		fmt.Fprintln(h.out, compact(subscribeLine{Type: "wakeup", Kind: m.Kind, Text: m.Text, TriggerTurn: m.TriggerTurn}))
		return
	}
	fmt.Fprintf(h.out, "\n[%s]\n%s\n", m.Kind, m.Text)
}

func (g *globals) subscribe(cmd *cobra.Command, fields map[string]any, forDur time.Duration) error {
	var host *printHost
	wrap := func(h cliHost) mcprt.Host {
		host = &printHost{cliHost: h, out: g.stdout, json: g.json}
		return host
	}
	return g.withEither(cmd, wrap, func(rt cliRuntime) error { return g.subscribed(cmd, rt, host, fields, forDur) })
}

// subscribed subscribes through rt, whose host is host, and prints until
// --for ends or Ctrl-C.
func (g *globals) subscribed(cmd *cobra.Command, rt cliRuntime, host *printHost, fields map[string]any, forDur time.Duration) error {
	b, _ := json.Marshal(fields)
	if g.json {
		// JSON lines only: the acknowledgement is the first line.
		t, _ := rt.Tool(mcprt.EventsToolName)
		r := t.Execute(cmd.Context(), b)
		host.mu.Lock()
		fmt.Fprintln(g.stdout, compact(subscribeLine{Type: "subscribed", Result: &r}))
		host.mu.Unlock()
		if err := resultError(r); err != nil {
			return err
		}
	} else if err := g.runTool(cmd, rt, mcprt.EventsToolName, b); err != nil {
		return err
	}
	ctx := cmd.Context()
	if forDur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, forDur)
		defer cancel()
	}
	<-ctx.Done() // wakeups print as they arrive; Ctrl-C or --for ends it
	return nil
}
