package main

import (
	"context"
	"runtime"
	"testing"

	"github.com/mcprt/mcprt"
)

// Issue 16 item 8: --sampling "command CMD" takes what the command prints
// as the answer: {"text", ...}, MCP's CreateMessageResult, or plain text.
func TestSamplingCommandOutputShapes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the commands are sh scripts")
	}
	for out, want := range map[string]string{
		`{"text":"hello","model":"m","stopReason":"endTurn"}`:                       "hello",
		`{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}`: "hello",
		`just words`: "just words",
	} {
		res, err := sampleWith(context.Background(), []string{"sh", "-c", "cat >/dev/null; printf '%s' '" + out + "'"}, mcprt.SamplingRequest{})
		if err != nil || res.Text != want {
			t.Errorf("%s: got %q (%v), want %q", out, res.Text, err, want)
		}
	}
}
