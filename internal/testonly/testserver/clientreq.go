package testserver

import (
	"context"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The tools --client-requests adds: each asks the client something while
// (or after) a call runs.
const (
	// ToolAskRoots asks roots/list during the call and returns the root
	// URIs, comma-separated.
	ToolAskRoots = "ask_roots"
	// ToolAskName asks a form elicitation for a "name" during the call
	// and returns "<action> <name>".
	ToolAskName = "ask_name"
	// ToolAskRootsLater returns at once, then asks roots/list with no
	// call in flight; ToolLastRoots returns that answer ("<none>" until
	// it came, "error: ..." for an error).
	ToolAskRootsLater = "ask_roots_later"
	ToolLastRoots     = "last_roots"
)

func clientRequestTools() []server.ServerTool {
	var mu sync.Mutex
	last := "<none>"
	tool := func(name, desc string, h server.ToolHandlerFunc) server.ServerTool {
		return server.ServerTool{Tool: mcp.NewTool(name, mcp.WithDescription(desc)), Handler: h}
	}
	return []server.ServerTool{
		tool(ToolAskRoots, "Asks the client's roots and returns their URIs.", func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(askRoots(ctx)), nil
		}),
		tool(ToolAskName, "Asks the user's name (form elicitation) and returns the action and the name.", func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			srv := server.ServerFromContext(ctx)
			res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message: "your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
					"name": map[string]any{"type": "string"}}, "required": []string{"name"}},
			}})
			if err != nil {
				return text("error: " + err.Error()), nil
			}
			content, _ := res.Content.(map[string]any) // nil when declined
			name, _ := content["name"].(string)
			return text(string(res.Action) + " " + name), nil
		}),
		tool(ToolAskRootsLater, "Returns, then asks the client's roots with no call in flight.", func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			bg := context.WithoutCancel(ctx)
			go func() {
				got := askRoots(bg)
				mu.Lock()
				last = got
				mu.Unlock()
			}()
			return text("asking"), nil
		}),
		tool(ToolLastRoots, "Returns the answer of the last "+ToolAskRootsLater+".", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			return text(last), nil
		}),
	}
}

func askRoots(ctx context.Context) string {
	res, err := server.ServerFromContext(ctx).RequestRoots(ctx, mcp.ListRootsRequest{})
	if err != nil {
		return "error: " + err.Error()
	}
	uris := make([]string, 0, len(res.Roots))
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	return strings.Join(uris, ",")
}
