package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/extension"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// The protocol-extension API through attached sessions, against the test
// server's "example" namespace in a process of its own; what the server
// saw (cancellations) is read from its logs.

var exampleDef = mcprt.Definition{
	Namespace:     "example",
	Requests:      []string{ts.MethodExampleList, ts.MethodExamplePoke},
	Streams:       []string{ts.MethodExampleStream},
	Notifications: []string{ts.NoteExampleActive, ts.NoteExampleItem, ts.NoteExampleListChanged},
}

// protoRig is a member with the test server "ts" logging its
// cancellations to cncl.
type protoRig struct {
	*rig
	cncl string
}

func newProtoRig(t *testing.T) *protoRig { return newProtoRigWith(t, ServeOptions{}) }

func newProtoRigWith(t *testing.T, opts ServeOptions) *protoRig {
	t.Helper()
	cncl := filepath.Join(t.TempDir(), "cancels")
	r := newRig(t, map[string]config.Server{"ts": testServer(t, map[string]string{ts.EnvCancelLog: cncl})}, opts)
	return &protoRig{rig: r, cncl: cncl}
}

// cancelled reports whether the server logged the cancellation of the
// stream whose first frame is f.
func (r *protoRig) cancelled(t *testing.T, f protoFrame) bool {
	raw, _ := json.Marshal(streamID(t, f))
	b, _ := os.ReadFile(r.cncl)
	return strings.Contains(string(b), ts.StreamCancelLine(raw)+"\n")
}

// mustRegister registers the example protocol on s.
func mustRegister(t *testing.T, s *Session) *Protocol {
	t.Helper()
	p, err := s.RegisterProtocol(exampleDef)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// protoFrames records what a handler received.
type protoFrames struct {
	mu   sync.Mutex
	got  []protoFrame
	fail func(n int) error
}

type protoFrame struct {
	method string
	params json.RawMessage
}

func (f *protoFrames) handle(method string, params json.RawMessage) error {
	f.mu.Lock()
	f.got = append(f.got, protoFrame{method, params})
	n := len(f.got)
	f.mu.Unlock()
	if f.fail != nil {
		return f.fail(n)
	}
	return nil
}

func (f *protoFrames) snapshot() []protoFrame {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]protoFrame(nil), f.got...)
}

func (f *protoFrames) wait(ctx context.Context, t *testing.T, n int) []protoFrame {
	t.Helper()
	testkit.Poll(ctx, t, fmt.Sprintf("%d frames", n), func() bool { return len(f.snapshot()) >= n })
	return f.snapshot()
}

// summary renders frames as "method n" (n from params).
func summary(fs []protoFrame) string {
	var b strings.Builder
	for _, f := range fs {
		var p struct {
			N *int `json:"n"`
		}
		_ = json.Unmarshal(f.params, &p)
		b.WriteString(strings.TrimPrefix(f.method, "notifications/example/"))
		if p.N != nil {
			fmt.Fprintf(&b, " %d", *p.N)
		}
		b.WriteString("; ")
	}
	return b.String()
}

func streamID(t *testing.T, f protoFrame) string {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var id string
	if json.Unmarshal(f.params, &p) != nil || json.Unmarshal(p.Meta[messages.SubscriptionIDKey], &id) != nil {
		t.Fatalf("a frame without a subscription id: %s", f.params)
	}
	return id
}

func params(p ts.StreamParams) json.RawMessage {
	b, _ := json.Marshal(p)
	return b
}

func waitDone(ctx context.Context, t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("%s did not end", what)
	}
}

func wantEnd(t *testing.T, what string, got mcprt.End, reason messages.EndReason) {
	t.Helper()
	if got.Reason != reason {
		t.Fatalf("%s ended %q (%s), want %q", what, got.Reason, got.Error, reason)
	}
}

// A request's result, a stream's notifications in order and its end with
// a JSON-RPC error's code, message and data, Sent, an observer, a handler
// that fails, and Close cancelling a stream on the server: the root
// package's contracts, through a session.
func TestProtocolThroughSession(t *testing.T) {
	r := newProtoRig(t)
	ctx := testkit.Ctx(t)
	s := r.attach(t, AttachOptions{})
	p := mustRegister(t, s)
	if p.Namespace() != "example" {
		t.Fatalf("namespace %q", p.Namespace())
	}
	ps, err := p.Connect(ctx, "ts")
	if err != nil {
		t.Fatal(err)
	}
	if ps.Server() != "ts" || ps.ServerInfo().Name == "" {
		t.Fatalf("server %q, info %+v", ps.Server(), ps.ServerInfo())
	}
	res, err := ps.Request(ctx, ts.MethodExampleList, json.RawMessage(`{"filter":"x"}`))
	if err != nil || string(res) != `{"items":["a","b"]}` {
		t.Fatalf("example/list: %s, %v", res, err)
	}
	if _, err := ps.Request(ctx, "example/nope", nil); messages.KindOf(err) != messages.KindInvalidArgs {
		t.Fatalf("an undeclared request: %v, want invalid_args", err)
	}

	t.Run("stream_in_order", func(t *testing.T) {
		var f protoFrames
		st, err := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 200}), f.handle)
		if err != nil {
			t.Fatal(err)
		}
		waitDone(ctx, t, st.Done(), "the stream")
		wantEnd(t, "the stream", st.Closed(), messages.EndEnded)
		select {
		case <-st.Sent():
		default:
			t.Fatal("Sent is not closed after the stream ended with a result")
		}
		want := "active; "
		for n := 1; n <= 200; n++ {
			want += fmt.Sprintf("item %d; ", n)
		}
		if got := summary(f.snapshot()); got != want {
			t.Fatalf("frames out of order or missing:\n got %s\nwant %s", got, want)
		}
	})

	t.Run("error_end", func(t *testing.T) {
		var f protoFrames
		st, err := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 1, End: ts.EndError,
			ErrorCode: -32042, ErrorMessage: "no such item", ErrorData: json.RawMessage(`{"item":"x","retry":false}`)}), f.handle)
		if err != nil {
			t.Fatal(err)
		}
		end := st.Closed()
		wantEnd(t, "the failed stream", end, messages.EndError)
		if pe := end.ProtocolError; pe == nil || pe.Code != -32042 || pe.Message != "no such item" || string(pe.Data) != `{"item":"x","retry":false}` {
			t.Fatalf("protocol error %+v (end %+v)", pe, end)
		}
	})

	t.Run("observer", func(t *testing.T) {
		var f protoFrames
		o, err := ps.WatchNotifications([]string{ts.NoteExampleListChanged}, f.handle)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ps.Request(ctx, ts.MethodExamplePoke, nil); err != nil {
			t.Fatal(err)
		}
		if got := f.wait(ctx, t, 1); got[0].method != ts.NoteExampleListChanged {
			t.Fatalf("observer got %s", got[0].method)
		}
		o.Close()
		waitDone(ctx, t, o.Done(), "the observer")
		wantEnd(t, "the closed observer", o.Closed(), messages.EndCancelled)
		if _, err := ps.WatchNotifications([]string{ts.NoteExampleUndeclared}, f.handle); messages.KindOf(err) != messages.KindInvalidArgs {
			t.Fatalf("watching an undeclared notification: %v", err)
		}
	})

	t.Run("handler_failure", func(t *testing.T) {
		for _, how := range []string{"error", "panic"} {
			f := protoFrames{fail: func(n int) error {
				if n < 2 {
					return nil
				}
				if how == "panic" {
					panic("the consumer broke")
				}
				return errors.New("the consumer refused the item")
			}}
			st, err := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 1, End: ts.EndNever}), f.handle)
			if err != nil {
				t.Fatal(err)
			}
			end := st.Closed()
			wantEnd(t, how+" handler", end, messages.EndError)
			if !strings.Contains(end.Error, "protocol handler failed") {
				t.Fatalf("%s: end.Error %q", how, end.Error)
			}
			testkit.Poll(ctx, t, "the server sees the failed stream cancelled", func() bool { return r.cancelled(t, f.snapshot()[0]) })
		}
	})

	t.Run("cancel_and_close", func(t *testing.T) {
		var fa, fb protoFrames
		a, _ := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 1, End: ts.EndNever}), fa.handle)
		b, _ := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 1, End: ts.EndNever}), fb.handle)
		fa.wait(ctx, t, 2)
		fb.wait(ctx, t, 2)
		a.Cancel()
		wantEnd(t, "the cancelled stream", a.Closed(), messages.EndCancelled)
		testkit.Poll(ctx, t, "the server sees the cancellation", func() bool { return r.cancelled(t, fa.snapshot()[0]) })
		if r.cancelled(t, fb.snapshot()[0]) {
			t.Fatal("cancelling one stream cancelled its sibling")
		}
		ps.Close()
		waitDone(ctx, t, ps.Done(), "the closed protocol session")
		if ps.Why() == "" {
			t.Fatal("Why is empty after Close")
		}
		wantEnd(t, "the stream of a closed session", b.Closed(), messages.EndCancelled)
		testkit.Poll(ctx, t, "the server sees the closed session's stream cancelled", func() bool { return r.cancelled(t, fb.snapshot()[0]) })
		testkit.Poll(ctx, t, "no lease left", func() bool { return leases(r.rig, "ts") == 0 })
		if _, err := ps.Request(ctx, ts.MethodExampleList, nil); messages.KindOf(err) != messages.KindDisconnected {
			t.Fatalf("a request on a closed protocol session: %v", err)
		}
	})
}

// Registration: a definition is checked by the member's runtime; the
// runtime's own "events" stays reserved; two sessions share a namespace
// with the same definition and no other; nothing a session registers or
// connects can name a command.
func TestProtocolRegistrationThroughSessions(t *testing.T) {
	r := newProtoRig(t)
	ctx := testkit.Ctx(t)
	a, b, c := r.attach(t, AttachOptions{}), r.attach(t, AttachOptions{}), r.attach(t, AttachOptions{})
	for what, def := range map[string]mcprt.Definition{
		"the runtime's events": {Namespace: "events", Requests: []string{"events/list"}},
		"a reserved namespace": {Namespace: "tools", Requests: []string{"tools/x"}},
		"a foreign method":     {Namespace: "example", Requests: []string{"other/list"}},
	} {
		if _, err := a.RegisterProtocol(def); !errors.Is(err, extension.ErrInvalidDefinition) {
			t.Errorf("%s: %v, want ErrInvalidDefinition", what, err)
		}
	}
	pa, err := a.RegisterProtocol(exampleDef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RegisterProtocol(exampleDef); !errors.Is(err, extension.ErrInvalidDefinition) {
		t.Errorf("the same session registering a namespace twice: %v", err)
	}
	shuffled := exampleDef
	shuffled.Requests = []string{ts.MethodExamplePoke, ts.MethodExampleList}
	pb, err := b.RegisterProtocol(shuffled)
	if err != nil {
		t.Fatalf("a second session with the same definition: %v", err)
	}
	other := exampleDef // example/stream as a request: its JSON-RPC error is the request's
	other.Requests, other.Streams = []string{ts.MethodExampleList, ts.MethodExampleStream}, nil
	if _, err := c.RegisterProtocol(other); !errors.Is(err, extension.ErrInvalidDefinition) {
		t.Errorf("a different definition of a namespace another session holds: %v", err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	for _, server := range []string{"sh -c 'touch " + marker + "'", "/bin/touch", "http://127.0.0.1:1/mcp"} {
		if _, err := pa.Connect(ctx, server); err == nil {
			t.Errorf("connecting %q was not refused", server)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a session started a command the configuration does not name")
	}
	if got := r.rt.Servers(); len(got) != 1 || got[0] != "ts" {
		t.Errorf("servers %v after the session's attempts", got)
	}
	// a's Dispose leaves b's registration: b still connects.
	pa.Dispose()
	if _, err := pa.Connect(ctx, "ts"); err == nil {
		t.Error("Connect after Dispose was not refused")
	}
	psb, err := pb.Connect(ctx, "ts")
	if err != nil {
		t.Fatalf("b's Connect after a disposed: %v", err)
	}
	if _, err := psb.Request(ctx, ts.MethodExampleList, nil); err != nil {
		t.Fatal(err)
	}
	// Once both disposed, c may register the namespace its own way.
	pb.Dispose()
	waitDone(ctx, t, psb.Done(), "b's protocol session after Dispose")
	pc, err := c.RegisterProtocol(other)
	if err != nil {
		t.Fatalf("the namespace after its last session disposed it: %v", err)
	}
	psc, err := pc.Connect(ctx, "ts")
	if err != nil {
		t.Fatal(err)
	}
	_, err = psc.Request(ctx, ts.MethodExampleStream, params(ts.StreamParams{End: ts.EndError,
		ErrorCode: -32042, ErrorMessage: "no such item", ErrorData: json.RawMessage(`{"item":"x","retry":false}`)}))
	var me *messages.Error
	if !errors.As(err, &me) || me.Kind != messages.KindRPC {
		t.Fatalf("a request answered with a JSON-RPC error: %v, want rpc", err)
	}
	if pe := me.Protocol(); pe == nil || pe.Code != -32042 || pe.Message != "no such item" || string(pe.Data) != `{"item":"x","retry":false}` {
		t.Fatalf("the request's JSON-RPC error %+v (from %+v)", pe, me)
	}
}

// A session's end (its process's connection gone, its detach, a crash
// of its actor) ends the member's protocol sessions for it: the server
// sees its streams cancelled and their leases return; another session's
// stream on the same connection carries on, and one session cannot
// cancel another's stream by naming its id.
func TestProtocolSessionsEndWithTheirSession(t *testing.T) {
	var arm testkit.CrashArm
	// Manual clocks: no heartbeat and no session timeout, so the crash
	// lands on the message a sends, not on b's actor.
	r := newProtoRigWith(t, ServeOptions{InjectCrash: arm.Inject, Clock: testkit.NewClock()})
	ctx := testkit.Ctx(t)
	for _, how := range []string{"connection", "detach", "crash"} {
		t.Run(how, func(t *testing.T) {
			a, b := r.attach(t, AttachOptions{Clock: testkit.NewClock()}), r.attach(t, AttachOptions{Clock: testkit.NewClock()})
			for range 10 { // a's ids are not b's: b names ids it does not hold
				a.protos.newID()
			}
			pa, err := a.RegisterProtocol(exampleDef)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := b.RegisterProtocol(exampleDef)
			if err != nil {
				t.Fatal(err)
			}
			psa, _ := pa.Connect(ctx, "ts")
			psb, _ := pb.Connect(ctx, "ts")
			var fa, fb, fo protoFrames
			sa, _ := psa.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 1, End: ts.EndNever}), fa.handle)
			oa, _ := psa.WatchNotifications([]string{ts.NoteExampleListChanged}, fo.handle)
			sb, _ := psb.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 1, End: ts.EndNever}), fb.handle)
			fa.wait(ctx, t, 2)
			fb.wait(ctx, t, 2)
			testkit.Poll(ctx, t, "three leases (two streams, an observer)", func() bool { return leases(r.rig, "ts") == 3 })

			// b names a's stream and protocol session by a's ids: they are
			// looked up among b's own, and nothing of a's ends.
			b.fire(opProtoCancel, protoOpenArgs{Stream: sa.c.id})
			b.fire(opProtoClose, protoOpenArgs{Conn: psa.id})
			if _, err := psb.Request(ctx, ts.MethodExampleList, nil); err != nil { // after b's fires on the member
				t.Fatal(err)
			}
			if r.cancelled(t, fa.snapshot()[0]) || leases(r.rig, "ts") != 3 {
				t.Fatal("another session's ids reached a's stream")
			}

			switch how {
			case "connection":
				a.link.conn.Close() // as the process's death looks to the member
			case "detach":
				_ = a.Close()
			case "crash":
				arm.Arm(messages.ActorAttachedSession)
				_ = a.Servers() // its request crashes a's actor
			}
			testkit.Poll(ctx, t, "the server sees a's stream cancelled", func() bool { return r.cancelled(t, fa.snapshot()[0]) })
			testkit.Poll(ctx, t, "a's leases returned", func() bool { return leases(r.rig, "ts") == 1 })
			waitDone(ctx, t, psa.Done(), "a's protocol session")
			waitDone(ctx, t, sa.Done(), "a's stream")
			waitDone(ctx, t, oa.Done(), "a's observer")
			select {
			case <-sb.Done():
				t.Fatalf("b's stream ended with a's session: %+v", sb.Closed())
			case <-psb.Done():
				t.Fatalf("b's protocol session ended with a's session: %s", psb.Why())
			default:
			}
			if r.cancelled(t, fb.snapshot()[0]) {
				t.Fatal("the server saw b's stream cancelled")
			}
			sb.Cancel()
			wantEnd(t, "b's stream", sb.Closed(), messages.EndCancelled)
			testkit.Poll(ctx, t, "no lease left", func() bool { return leases(r.rig, "ts") == 0 })
			pb.Dispose()
		})
	}
}

// The connection a protocol session is bound to ends: its Done closes
// with a reason and its stream ends disconnected, through the session.
func TestProtocolConnectionEndThroughSession(t *testing.T) {
	r := newProtoRig(t)
	ctx := testkit.Ctx(t)
	s := r.attach(t, AttachOptions{})
	p := mustRegister(t, s)
	ps, _ := p.Connect(ctx, "ts")
	var f protoFrames
	st, _ := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 1, End: ts.EndNever}), f.handle)
	f.wait(ctx, t, 2)
	if _, err := r.rt.Connect(ctx, "ts", true); err != nil { // a fresh connection replaces the bound one
		t.Fatal(err)
	}
	waitDone(ctx, t, ps.Done(), "the protocol session")
	if ps.Why() == "" {
		t.Fatal("Why is empty after the connection ended")
	}
	wantEnd(t, "the stream", st.Closed(), messages.EndDisconnected)
	ps2, err := p.Connect(ctx, "ts")
	if err != nil {
		t.Fatalf("a new protocol session: %v", err)
	}
	if _, err := ps2.Request(ctx, ts.MethodExampleList, nil); err != nil {
		t.Fatal(err)
	}
}

// A protocol session on a server another member runs is relayed through
// the member's own session on that member: requests, a stream in order,
// and the session's end cancelling the stream on the server there.
func TestProtocolThroughPeer(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	cncl := filepath.Join(t.TempDir(), "cancels")
	b := &protoRig{rig: newRig(t, map[string]config.Server{"ts": testServer(t, map[string]string{ts.EnvCancelLog: cncl})}, ServeOptions{ClusterTokenFile: ct}), cncl: cncl}
	a := newRig(t, nil, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: b.srv.Addr()}}})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "a to see b running ts", func() bool { return len(a.srv.member.running("ts")) == 1 })
	s := a.attach(t, AttachOptions{})
	p := mustRegister(t, s)
	ps, err := p.Connect(ctx, "ts")
	if err != nil {
		t.Fatalf("a protocol session on a peer's server: %v", err)
	}
	if res, err := ps.Request(ctx, ts.MethodExampleList, nil); err != nil || string(res) != `{"items":["a","b"]}` {
		t.Fatalf("example/list through the peer: %s, %v", res, err)
	}
	var f protoFrames
	st, _ := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 50}), f.handle)
	wantEnd(t, "the relayed stream", st.Closed(), messages.EndEnded)
	want := "active; "
	for n := 1; n <= 50; n++ {
		want += fmt.Sprintf("item %d; ", n)
	}
	if got := summary(f.snapshot()); got != want {
		t.Fatalf("relayed frames:\n got %s\nwant %s", got, want)
	}
	var g protoFrames
	never, _ := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 1, End: ts.EndNever}), g.handle)
	g.wait(ctx, t, 2)
	if leases(b.rig, "ts") != 1 {
		t.Fatalf("%d leases on the member running ts, want the open stream's", leases(b.rig, "ts"))
	}
	_ = s.Close()
	waitDone(ctx, t, never.Done(), "the relayed stream of a closed session")
	testkit.Poll(ctx, t, "the peer's server sees the stream cancelled", func() bool { return b.cancelled(t, g.snapshot()[0]) })
	testkit.Poll(ctx, t, "no lease left on the peer", func() bool { return leases(b.rig, "ts") == 0 })
}

// mirrored maps the root package's protocol-extension types to this
// package's (protocol.go): remote.Protocol, ProtocolSession, Stream and
// Observer mirror mcprt.Protocol, Session, Stream and Observer.
func mirrored(sig string) string {
	return strings.NewReplacer("*mcprt.Protocol", "*remote.Protocol", "*mcprt.Session", "*remote.ProtocolSession",
		"*mcprt.Stream", "*remote.Stream", "*mcprt.Observer", "*remote.Observer").Replace(sig)
}

// The protocol-extension types through a session have every method of
// the root package's, with the same signatures (modulo the mirrored
// types).
func TestProtocolTypesMirrorTheRuntimes(t *testing.T) {
	for _, pair := range [][2]any{
		{&mcprt.Protocol{}, &Protocol{}}, {&mcprt.Session{}, &ProtocolSession{}},
		{&mcprt.Stream{}, &Stream{}}, {&mcprt.Observer{}, &Observer{}},
	} {
		root, ours := reflect.TypeOf(pair[0]), reflect.TypeOf(pair[1])
		for i := 0; i < root.NumMethod(); i++ {
			m := root.Method(i)
			om, ok := ours.MethodByName(m.Name)
			if !ok {
				t.Errorf("%s has no %s", ours, m.Name)
				continue
			}
			if got, want := signature(om.Type), mirrored(signature(m.Type)); got != want {
				t.Errorf("%s.%s is %s; %s's is %s", ours, m.Name, got, root, want)
			}
		}
	}
}

// A protocol event survives encode and decode, a notification's params
// and a JSON-RPC error's data byte for byte.
func TestProtocolEventRoundTrip(t *testing.T) {
	for _, m := range []*protoEventMsg{
		{Kind: protoNote, Stream: 3, Method: ts.NoteExampleItem, Params: json.RawMessage(`{"n":1,"_meta":{"io.modelcontextprotocol/subscriptionId":"mcprt-1"}}`)},
		{Kind: protoSent, Stream: 3},
		{Kind: protoEnd, Stream: 3, End: &mcprt.End{Reason: messages.EndError, Error: "no such item",
			ProtocolError: &messages.ProtocolError{Code: -32042, Message: "no such item", Data: json.RawMessage(`{"item":"x"}`)}}},
		{Kind: protoDone, Conn: 2, Why: "the connection ended"},
	} {
		v, err := encode(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decode(v)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("decoded %#v, want %#v", got, m)
		}
	}
}

// A handler that falls behind by maxOutbox notifications ends its own
// stream (error: not keeping up) and the stream is cancelled on the
// server; another stream of the session is untouched.
func TestProtocolSlowHandlerEndsItsStream(t *testing.T) {
	r := newProtoRig(t)
	ctx := testkit.Ctx(t)
	s := r.attach(t, AttachOptions{})
	p := mustRegister(t, s)
	ps, _ := p.Connect(ctx, "ts")
	var sib protoFrames
	sibling, _ := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: 1, End: ts.EndNever}), sib.handle)
	sib.wait(ctx, t, 2)
	release := make(chan struct{})
	var first protoFrames
	slow, err := ps.OpenStream(ts.MethodExampleStream, params(ts.StreamParams{Count: maxOutbox + 100, End: ts.EndNever}),
		func(method string, params json.RawMessage) error {
			if len(first.snapshot()) == 0 {
				_ = first.handle(method, params)
				<-release
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	f := first.wait(ctx, t, 1)
	testkit.Poll(ctx, t, "the server sees the slow stream cancelled", func() bool { return r.cancelled(t, f[0]) })
	close(release)
	end := slow.Closed()
	wantEnd(t, "the slow stream", end, messages.EndError)
	if !strings.Contains(end.Error, "not keeping up") {
		t.Fatalf("end.Error %q", end.Error)
	}
	select {
	case <-sibling.Done():
		t.Fatalf("the sibling ended: %+v", sibling.Closed())
	default:
	}
}
