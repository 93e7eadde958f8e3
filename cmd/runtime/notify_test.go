package main

import (
	"context"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// A warning names its server once, as the reference shows them
// ("<server>: <text>"): before a text that does not, never twice.
func TestWarningsNameTheirServer(t *testing.T) {
	for _, c := range []struct {
		n    messages.Notice
		want string
	}{
		{messages.Notice{Server: "demo", Level: messages.NoticeWarning, Text: "replay is truncated for fs.changed; some events are unavailable"},
			"runtime: warning: demo: replay is truncated for fs.changed; some events are unavailable\n"},
		{messages.Notice{Server: "demo", Level: messages.NoticeWarning, Text: `server "demo": upstream poll failed`},
			"runtime: warning: server \"demo\": upstream poll failed\n"},
		{messages.Notice{Level: messages.NoticeWarning, Text: "config: unknown field"},
			"runtime: warning: config: unknown field\n"},
	} {
		var b strings.Builder
		cliHost{w: &b}.Notify(context.Background(), c.n)
		if b.String() != c.want {
			t.Errorf("notice %+v printed %q, want %q", c.n, b.String(), c.want)
		}
	}
}
