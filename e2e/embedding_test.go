package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
)

// recHost records what the runtime tells the host.
type recHost struct {
	mu      sync.Mutex
	notices []messages.Notice // guarded by mu
}

func (h *recHost) Deliver(context.Context, messages.HostMessage) {}

func (h *recHost) Notify(_ context.Context, n messages.Notice) {
	h.mu.Lock()
	h.notices = append(h.notices, n)
	h.mu.Unlock()
}

// The runtime never registers a tool whose name the host already uses
// (mcprt.Options.HostTools); it reports the tool it left out instead.
func TestHostToolsAreNeverShadowed(t *testing.T) {
	t.Parallel()
	host := &recHost{}
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{Host: host, HostTools: []string{"read", mcprt.MCPToolName, mcprt.EventsToolName}, Sim: &simseam.Seams{Clock: clock.NewManual(clock.Epoch)},
		Config: &config.File{MCPServers: map[string]config.Server{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if tools := rt.Tools(); len(tools) != 0 {
		t.Fatalf("registered %q, which the host has", tools[0].Name)
	}
	if _, ok := rt.Tool(mcprt.MCPToolName); ok {
		t.Fatal("Tool returned the shadowing tool")
	}
	issues := rt.ConfigIssues()
	if len(issues) != 2 || !strings.Contains(issues[0].String(), `tool "mcp" is not registered`) || !strings.Contains(issues[1].String(), `tool "mcp_events" is not registered`) {
		t.Fatalf("issues %v", issues)
	}
	host.mu.Lock()
	defer host.mu.Unlock()
	if len(host.notices) != 2 || host.notices[0].Level != messages.NoticeWarning || host.notices[0].Text != issues[0].String() || host.notices[1].Text != issues[1].String() {
		t.Fatalf("notices %+v", host.notices)
	}

	rt2, err := mcprt.Start(testCtx(t), mcprt.Options{HostTools: []string{"read"}, Sim: &simseam.Seams{Clock: clock.NewManual(clock.Epoch)}, Config: &config.File{}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if tools := rt2.Tools(); len(tools) != 2 || tools[0].Name != mcprt.MCPToolName || tools[1].Name != mcprt.EventsToolName {
		t.Fatalf("tools %v", tools)
	}
}
