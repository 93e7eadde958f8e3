package main

import (
	"encoding/json"
	"strings"
	"testing"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/remote"
)

// `serve --session-subscriptions N` bounds each session's subscriptions:
// a session's second subscribe is refused with the limit of 1.
func TestServeSessionLimitFlag(t *testing.T) {
	addr := startServeConfig(t, map[string]any{"ev": map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --events")}},
		"--session-subscriptions", "1")
	ctx := testkit.Ctx(t)
	s, err := remote.Attach(ctx, addr, remote.AttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tool, _ := s.Tool(mcprt.EventsToolName)
	sub := func(tag string) mcprt.Result {
		return tool.Execute(ctx, json.RawMessage(`{"action":"subscribe","server":"ev","name":"`+testserver.EventTest+`","arguments":{"tag":"`+tag+`"}}`))
	}
	if res := sub("one"); res.IsError {
		t.Fatal(res.Text)
	}
	if res := sub("two"); !res.IsError || res.ErrorCode() != messages.KindResourceExhausted.Code() || !strings.Contains(res.Text, "limit of 1") {
		t.Fatalf("second subscribe: %q, want refused at the limit of 1", res.Text)
	}
}
