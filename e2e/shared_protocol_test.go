//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/remote"
)

// envAttachProto turns the test binary into a session process that opens
// a protocol stream and an observer on the member at its value, prints
// "LISTEN <the stream's id>" once the stream runs, and waits to be killed.
const envAttachProto = "MCPRT_E2E_ATTACH_PROTO"

func init() {
	if addr := os.Getenv(envAttachProto); addr != "" {
		os.Exit(protoChild(addr))
	}
}

func protoChild(addr string) int {
	ctx := context.Background()
	s, err := remote.Attach(ctx, addr, remote.AttachOptions{})
	if err != nil {
		fmt.Println("attach:", err)
		return 1
	}
	p, err := s.RegisterProtocol(exampleDef)
	if err != nil {
		fmt.Println("register:", err)
		return 1
	}
	ps, err := p.Connect(ctx, "ts")
	if err != nil {
		fmt.Println("connect:", err)
		return 1
	}
	first := make(chan string, 1)
	_, err = ps.OpenStream(ts.MethodExampleStream, streamParams(ts.StreamParams{Count: 1, End: ts.EndNever}), func(_ string, params json.RawMessage) error {
		var v struct {
			Meta map[string]string `json:"_meta"`
		}
		if json.Unmarshal(params, &v) == nil {
			select {
			case first <- v.Meta[messages.SubscriptionIDKey]:
			default:
			}
		}
		return nil
	})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	if _, err := ps.WatchNotifications([]string{ts.NoteExampleListChanged}, func(string, json.RawMessage) error { return nil }); err != nil {
		fmt.Println("watch:", err)
		return 1
	}
	fmt.Println("LISTEN " + <-first)
	select {} // until killed
}

// TestSharedProtocolSessionKilled: SIGKILL of a session's process whose
// protocol stream and observer are open on the member ends them there:
// the server sees the stream cancelled, and their leases return.
func TestSharedProtocolSessionKilled(t *testing.T) {
	t.Parallel()
	cncl := filepath.Join(t.TempDir(), "cancels")
	m := startMemberWith(t, nil, map[string]any{"ts": map[string]any{"command": testenv.Self(t),
		"env": testenv.TestServerEnv("--stdio", ts.EnvCancelLog+"="+cncl)}}, nil)
	ctx := testCtx(t)
	watcher := attach(t, m, nil)
	id, child := testenv.StartSelf(t, map[string]string{envAttachProto: m.addr, remote.EnvTokenDir: m.tokens})
	poll(ctx, t, "the child's stream and observer hold leases", func() bool { return tsStatus(t, watcher).Leases == 2 })
	if err := syscall.Kill(-child.Cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(id)
	poll(ctx, t, "the server sees the killed session's stream cancelled", func() bool { return countLine(cncl, ts.StreamCancelLine(raw)) == 1 })
	poll(ctx, t, "the killed session's leases returned", func() bool { return tsStatus(t, watcher).Leases == 0 })
}
