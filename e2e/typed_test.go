package e2e

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// The typed API against server-everything: an image arrives as bytes,
// structured content as JSON, and errors are testable with errors.Is.
func TestCallToolTyped(t *testing.T) {
	js := testenv.EverythingJS(t)
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{
		Config:   &config.File{MCPServers: map[string]config.Server{"every": {Command: testenv.Node(t), Args: []string{js, "stdio"}}}},
		AgentDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := testCtx(t)

	res, err := rt.CallTool(ctx, "every", "get-tiny-image", nil)
	if err != nil {
		t.Fatal(err)
	}
	var image *mcprt.Content
	for i := range res.Content {
		if res.Content[i].Type == "image" {
			image = &res.Content[i]
		}
	}
	if image == nil || image.MIMEType != "image/png" || !bytes.HasPrefix(image.Data, []byte("\x89PNG")) {
		t.Errorf("the image: %+v", image)
	}
	res, err = rt.CallTool(ctx, "every", "get-structured-content", map[string]any{"location": "New York"})
	if err != nil || len(res.Structured) == 0 || res.IsError {
		t.Errorf("structured content: %+v %v", res, err)
	}
	if tools, ok := rt.ServerTools("every"); !ok || len(tools) < 5 {
		t.Errorf("the catalog after calls: %d tools, known %v", len(tools), ok)
	}
	if _, err := rt.CallTool(ctx, "every", "no-such-tool", nil); !errors.Is(err, mcprt.ErrToolNotFound) {
		t.Errorf("an unknown tool: %v", err)
	}
	var e *mcprt.Error
	if _, err := rt.CallTool(ctx, "nope", "echo", nil); !errors.As(err, &e) || !errors.Is(err, mcprt.ErrServerNotFound) {
		t.Errorf("an unknown server: %v", err)
	}
}
