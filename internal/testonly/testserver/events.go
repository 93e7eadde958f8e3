package testserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/eventsrv"
	"github.com/mcprt/mcprt/internal/mcpserve"
)

// The event types of the test server's events namespace.
const (
	// EventTest takes arguments {"tag"?: string, "reject"?: bool}: with a
	// tag only occurrences whose data.tag equals it are sent; reject:true
	// is refused with -32602.
	EventTest = "test.event"
	// EventOther takes any arguments and sends every occurrence.
	EventOther = "test.other"
	// EventPollOnly and EventWebhookOnly offer no push delivery.
	EventPollOnly    = "test.poll"
	EventWebhookOnly = "test.webhook"
)

// The tools --events adds (see eventsrv's EmitTool, FaultTool, ArmTool and
// StreamsTool).
const (
	ToolEventsEmit    = "events_emit"
	ToolEventsFault   = "events_fault"
	ToolEventsArm     = "events_arm"
	ToolEventsStreams = "events_streams"
)

// EventsToolNames lists the tools --events adds, sorted.
func EventsToolNames() []string {
	return []string{ToolEventsArm, ToolEventsEmit, ToolEventsFault, ToolEventsStreams}
}

// testEventArgs are EventTest's arguments.
type testEventArgs struct {
	Tag    *string `json:"tag"`
	Reject bool    `json:"reject"`
}

// eventTypes returns the catalog: the four types, then extra ones
// ("extra.000"...) for --events-extra-types.
func eventTypes(extra int) []eventsrv.Type {
	types := []eventsrv.Type{
		{
			Name:        EventTest,
			Description: "Test occurrences published by events_emit; arguments.tag keeps those whose data.tag equals it.",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"tag":    map[string]any{"type": "string"},
				"reject": map[string]any{"type": "boolean", "description": "true: the server refuses the arguments"},
			}},
			PayloadSchema: map[string]any{"type": "object"},
			Match:         matchTag,
		},
		{Name: EventOther, Description: "Another test event type; every occurrence."},
		{Name: EventPollOnly, Description: "Offers only poll delivery.", Delivery: []string{eventsrv.DeliveryPoll}},
		{Name: EventWebhookOnly, Description: "Offers only webhook delivery.", Delivery: []string{eventsrv.DeliveryWebhook}},
	}
	for i := range extra {
		types = append(types, eventsrv.Type{Name: fmt.Sprintf("extra.%03d", i), Description: "Extra test event type."})
	}
	return types
}

// matchTag compiles EventTest's arguments.
func matchTag(args json.RawMessage) (func(json.RawMessage) bool, error) {
	var a testEventArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	if a.Reject {
		return nil, errors.New("rejected on purpose")
	}
	if a.Tag == nil {
		return func(json.RawMessage) bool { return true }, nil
	}
	return func(data json.RawMessage) bool {
		var d struct {
			Tag *string `json:"tag"`
		}
		return json.Unmarshal(data, &d) == nil && d.Tag != nil && *d.Tag == *a.Tag
	}, nil
}

// newEvents builds the events namespace's server from the command line.
func newEvents(cfg config) (*eventsrv.Server, error) {
	hb := time.Duration(cfg.eventsHeartbeatMs) * time.Millisecond
	if cfg.eventsHeartbeatMs == 0 {
		hb = -1
	}
	return eventsrv.New(eventsrv.Options{
		Clock:     clock.Real{},
		Heartbeat: hb,
		MaxEvents: cfg.eventsRetention,
		MaxAge:    time.Duration(cfg.eventsMaxAgeMs) * time.Millisecond,
		StateDir:  cfg.eventsState,
		PageSize:  cfg.eventsPageSize,
	}, eventTypes(cfg.eventsExtraTypes)...)
}

// eventTools returns the tools --events adds.
func eventTools(ev *eventsrv.Server) []server.ServerTool {
	var tools []server.ServerTool
	for _, t := range []mcpserve.Tool{
		ev.EmitTool(ToolEventsEmit),
		ev.FaultTool(ToolEventsFault, "Injects a fault into the open events/stream requests.", eventsrv.FaultKinds),
		ev.ArmTool(ToolEventsArm),
		ev.StreamsTool(ToolEventsStreams),
	} {
		tools = append(tools, server.ServerTool{Tool: t.Tool, Handler: server.ToolHandlerFunc(t.Handler)})
	}
	return tools
}
