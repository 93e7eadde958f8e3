package e2e

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/extension"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

func exampleRig(t *testing.T) *rig {
	return newRig(t, map[string]config.Server{
		"ex":  {Command: testenv.Self(t), Env: testenv.TestServerEnv("")},
		"off": {Command: testenv.Self(t), Env: testenv.TestServerEnv(""), Disabled: true},
	}, true)
}

func TestRegisterProtocolRules(t *testing.T) {
	t.Parallel()
	r := exampleRig(t)
	for _, ns := range extension.ReservedNamespaces {
		if _, err := r.rt.RegisterProtocol(mcprt.Definition{Namespace: ns, Requests: []string{ns + "/x"}}); !errors.Is(err, extension.ErrInvalidDefinition) {
			t.Errorf("core namespace %q: %v", ns, err)
		}
	}
	for _, d := range []mcprt.Definition{
		{Namespace: "example", Requests: []string{"other/list"}},
		{Namespace: "example", Streams: []string{"example"}},
		{Namespace: "example", Notifications: []string{"example/item"}},
	} {
		if _, err := r.rt.RegisterProtocol(d); !errors.Is(err, extension.ErrInvalidDefinition) {
			t.Errorf("%+v: %v", d, err)
		}
	}
	def := mcprt.Definition{Namespace: "example", Requests: []string{ts.MethodExampleList}, Notifications: []string{ts.NoteExampleItem}}
	p, err := r.rt.RegisterProtocol(def)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.rt.RegisterProtocol(def); !errors.Is(err, extension.ErrInvalidDefinition) {
		t.Fatalf("a second owner of the namespace: %v", err)
	}
	def.Requests[0] = ts.MethodExamplePoke // the caller's later change has no effect
	if n := r.dialer.DialCount("ex"); n != 0 {
		t.Fatalf("registering connected (%d dials)", n)
	}
	s, err := p.Connect(r.ctx, "ex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Request(r.ctx, ts.MethodExampleList, nil); err != nil {
		t.Fatalf("the declared request: %v", err)
	}
	if _, err := s.Request(r.ctx, ts.MethodExamplePoke, nil); messages.KindOf(err) != messages.KindInvalidArgs {
		t.Fatalf("a method added to the caller's copy later: %v", err)
	}
	for server, kind := range map[string]messages.ErrorKind{"nope": messages.KindServerNotFound, "off": messages.KindServerDisabled} {
		if _, err := p.Connect(r.ctx, server); messages.KindOf(err) != kind {
			t.Errorf("Connect %s: %v, want %s", server, err, kind.Code())
		}
	}
	p.Dispose()
	if _, err := r.rt.RegisterProtocol(def); err != nil {
		t.Fatalf("the namespace is not free after Dispose: %v", err)
	}
}

// Dispose closes every session of the registration (cancelling their
// streams) and never the shared connection.
func TestDisposeClosesSessionsNotTheConnection(t *testing.T) {
	t.Parallel()
	r := exampleRig(t)
	p, err := r.rt.RegisterProtocol(exampleDef)
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := p.Connect(r.ctx, "ex")
	s2, _ := p.Connect(r.ctx, "ex")
	var f frames
	st, err := s1.OpenStream(ts.MethodExampleStream, json.RawMessage(`{"count":1,"end":"never"}`), f.handle)
	if err != nil {
		t.Fatal(err)
	}
	f.wait(r.ctx, t, 2)
	p.Dispose()
	wantEnd(t, "the stream", waitEnd(r.ctx, t, st.Done(), st.Closed, "the stream"), messages.EndCancelled)
	for _, s := range []*mcprt.Session{s1, s2} {
		select {
		case <-s.Done():
		default:
			t.Fatal("a session of the disposed registration is still open")
		}
	}
	if _, err := p.Connect(r.ctx, "ex"); err == nil {
		t.Fatal("Connect after Dispose")
	}
	var st0 messages.ServerStatus
	poll(r.ctx, t, "leases returned", func() bool {
		for _, x := range r.rt.ServerStatuses() {
			if x.Name == "ex" {
				st0 = x
			}
		}
		return st0.Leases == 0
	})
	if st0.Name != "ex" || st0.State != messages.StateConnected || st0.Generation != 1 || r.dialer.DialCount("ex") != 1 {
		t.Fatalf("the shared connection after Dispose: %+v", st0)
	}
	if res := r.exec(r.ctx, `{"tool":"echo","args":{"message":"still here"}}`); res.IsError {
		t.Fatalf("a tool call after Dispose: %s", res.Text)
	}
}
