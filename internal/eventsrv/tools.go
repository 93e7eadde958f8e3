package eventsrv

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/mcpserve"
)

// maxEmit bounds one emit call's count.
const maxEmit = 100000

// faultArgs are the arguments of the fault and arm tools.
type faultArgs struct {
	Fault
	Name         string `json:"name"`
	Subscription string `json:"subscription"`
	Phase        string `json:"phase"`
	Times        int    `json:"times"`
}

// faultSchema is the input schema of the fault tools; extra lists more
// properties (JSON, with a leading comma).
func faultSchema(kinds []string, extra string) json.RawMessage {
	k, _ := json.Marshal(kinds)
	return json.RawMessage(`{"type":"object","required":["fault"],"properties":{` +
		`"fault":{"type":"string","enum":` + string(k) + `},` +
		`"name":{"type":"string","description":"only streams of this event type"},` +
		`"count":{"type":"integer","minimum":0},"bytes":{"type":"integer","minimum":0},"ms":{"type":"integer","minimum":0},` +
		`"code":{"description":"error code (rpc_error: any JSON value)"},"message":{"type":"string"},"data":{},` +
		`"frame":{"type":"string"}` + extra + `}}`)
}

func bindFault(req mcp.CallToolRequest, kinds []string) (faultArgs, error) {
	var a faultArgs
	raw, err := json.Marshal(req.GetRawArguments())
	if err == nil {
		err = json.Unmarshal(raw, &a)
	}
	if err != nil {
		return a, fmt.Errorf("arguments: %w", err)
	}
	if !slices.Contains(kinds, a.Kind) {
		return a, fmt.Errorf("fault must be one of %s", strings.Join(kinds, ", "))
	}
	return a, a.Fault.Check()
}

func jsonResult(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return mcp.NewToolResultText(string(b))
}

// FaultTool returns a tool called name that injects one of kinds into the
// open streams (all, or those of "name", or the one whose request id is
// "subscription") and answers {"streams": how many}.
func (s *Server) FaultTool(name, description string, kinds []string) mcpserve.Tool {
	schema := faultSchema(kinds, `,"subscription":{"type":"string","description":"only the stream of this request id (compact JSON)"}`)
	return mcpserve.Tool{
		Tool: mcp.NewToolWithRawSchema(name, description, schema),
		Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := bindFault(req, kinds)
			if err != nil {
				return mcp.NewToolResultError(name + ": " + err.Error()), nil
			}
			n, err := s.Inject(ctx, a.Fault, Target{Name: a.Name, Subscription: a.Subscription})
			if err != nil {
				return mcp.NewToolResultError(name + ": " + err.Error()), nil
			}
			return jsonResult(map[string]any{"streams": n}), nil
		},
	}
}

// ArmTool returns a tool called name that arms a fault for the next
// streams to open (see [Server.Arm]): phase "before_active" (default) or
// "after_active", "times" (default 1), "name" (default any event type).
func (s *Server) ArmTool(name string) mcpserve.Tool {
	schema := faultSchema(FaultKinds, `,"phase":{"type":"string","enum":["before_active","after_active"]},"times":{"type":"integer","minimum":1}`)
	return mcpserve.Tool{
		Tool: mcp.NewToolWithRawSchema(name, "Arms a fault for the next events/stream requests to open.", schema),
		Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := bindFault(req, FaultKinds)
			if err == nil {
				if a.Phase == "" {
					a.Phase = PhaseBeforeActive
				}
				err = s.Arm(a.Fault, a.Phase, a.Name, a.Times)
			}
			if err != nil {
				return mcp.NewToolResultError(name + ": " + err.Error()), nil
			}
			return jsonResult(map[string]any{"armed": a.Kind}), nil
		},
	}
}

// EmitTool returns a tool called name that publishes count (default 1)
// occurrences of event type "name": with data "data" (default {"n": i},
// i from 1), padded when "size" is set to {"n": i, "padding": size
// characters}, with eventId "eventId" when given (the same for all). It
// answers {"emitted": count, "first": eventId, "last": eventId}.
func (s *Server) EmitTool(name string) mcpserve.Tool {
	schema := json.RawMessage(`{"type":"object","required":["name"],"properties":{` +
		`"name":{"type":"string"},"data":{},"count":{"type":"integer","minimum":1,"maximum":100000},` +
		`"size":{"type":"integer","minimum":0},"eventId":{"type":"string"}}}`)
	return mcpserve.Tool{
		Tool: mcp.NewToolWithRawSchema(name, "Publishes occurrences of an event type.", schema),
		Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Name    string          `json:"name"`
				Data    json.RawMessage `json:"data"`
				Count   int             `json:"count"`
				Size    int             `json:"size"`
				EventID string          `json:"eventId"`
			}
			raw, _ := json.Marshal(req.GetRawArguments())
			if err := json.Unmarshal(raw, &a); err != nil || a.Count < 0 || a.Count > maxEmit || a.Size < 0 || a.Size > maxOversized {
				return mcp.NewToolResultError(fmt.Sprintf("%s: bad arguments (count in [1, %d], size in [0, %d])", name, maxEmit, maxOversized)), nil
			}
			var first, last Entry
			for i := 1; i <= max(a.Count, 1); i++ {
				var data any = a.Data
				if isNull(a.Data) {
					data = map[string]any{"n": i}
				}
				if a.Size > 0 {
					data = map[string]any{"n": i, "padding": strings.Repeat("p", a.Size)}
				}
				e, err := s.PublishID(a.Name, a.EventID, data)
				if err != nil {
					return mcp.NewToolResultError(name + ": " + err.Error()), nil
				}
				if i == 1 {
					first = e
				}
				last = e
			}
			return jsonResult(map[string]any{"emitted": max(a.Count, 1), "first": first.ID, "last": last.ID}), nil
		},
	}
}

// StreamsTool returns a tool called name that lists the open streams
// ([Server.Streams]) as {"streams": [...]}.
func (s *Server) StreamsTool(name string) mcpserve.Tool {
	return mcpserve.Tool{
		Tool: mcp.NewTool(name, mcp.WithDescription("Lists the open events/stream requests."), mcp.WithReadOnlyHintAnnotation(true)),
		Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return jsonResult(map[string]any{"streams": s.Streams()}), nil
		},
	}
}
