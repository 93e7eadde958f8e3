package remote

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// stalledPeer is a session process whose endpoint takes the member's
// connect request and first message, then never reads again.
type stalledPeer struct {
	remote.UnimplementedRemotingServer
	connected chan struct{}
	release   chan struct{}
}

func (p *stalledPeer) Receive(stream remote.Remoting_ReceiveServer) error {
	if _, err := stream.Recv(); err != nil { // the connect request
		return err
	}
	if err := stream.Send(&remote.RemoteMessage{MessageType: &remote.RemoteMessage_ConnectResponse{ConnectResponse: &remote.ConnectResponse{}}}); err != nil {
		return err
	}
	select {
	case p.connected <- struct{}{}:
	default:
	}
	select { // stops reading: the member's writes pile up, then block
	case <-p.release:
	case <-stream.Context().Done():
	}
	return nil
}

// A session whose process stays connected but stops reading cannot stall
// the member: once the member's writes to it block, only its own session
// actor waits, and at the session timeout the blocked write is aborted and
// the session ends; other sessions are served throughout.
func TestStalledSessionCannotStallMember(t *testing.T) {
	clk := testkit.NewClock()
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{Clock: clk})
	ctx := testkit.Ctx(t)

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	peer := &stalledPeer{connected: make(chan struct{}, 1), release: make(chan struct{})}
	gs := grpc.NewServer()
	remote.RegisterRemotingServer(gs, peer)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(func() {
		close(peer.release)
		gs.Stop()
	})

	// The stalled process attaches over a link of its own, then never
	// reads it again (its receive buffer kept small).
	fake := lis.Addr().String()
	conn, err := net.Dial("tcp", r.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	h, _ := json.Marshal(hello{Token: r.srv.token, Address: fake})
	if _, err := conn.Write(append([]byte(linkMagic), frame("", h)...)); err != nil {
		t.Fatal(err)
	}
	if _, answer, err := readFrame(bufio.NewReader(conn)); err != nil || len(answer) > 0 {
		t.Fatalf("the member's answer to the link: %q, %v", answer, err)
	}
	send := func(target *actor.PID, m any) {
		t.Helper()
		b, _, err := appendFrame(nil, target.Id, m)
		if err == nil {
			_, err = conn.Write(b)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	send(actor.NewPID(r.srv.Addr(), GatewayName), &attachMsg{Client: pidRef{Address: fake, ID: "stalled"}, Nonce: "n"})
	testkit.Poll(ctx, t, "the stalled session attached", func() bool { return r.srv.Sessions() == 1 })
	session := actor.NewPID(r.srv.Addr(), "mcprt-gateway/session-1")
	// Requests whose replies fill the connection's buffers, until a
	// write to it blocks.
	var id uint64
	testkit.Poll(ctx, t, "a write to the stalled session blocked", func() bool {
		if ml, _ := r.srv.linkTo(fake); ml != nil && ml.sending.Load() > 0 {
			return true
		}
		for i := 0; i < 50; i++ {
			id++
			send(session, &requestMsg{ID: id, Op: opTools})
		}
		return false
	})

	// Another session is served meanwhile.
	other := r.attach(t, AttachOptions{Clock: testkit.NewClock()})
	if got := other.Servers(); len(got) != 1 {
		t.Fatalf("another session while one is stalled: servers %v", got)
	}

	// The timeout (the other session, silent on its clock, ends too).
	clk.Advance(DefaultSessionTimeout)
	testkit.Poll(ctx, t, "the stalled session ended", func() bool { return r.srv.Sessions() == 0 })
	if got := r.attach(t, AttachOptions{}).Servers(); len(got) != 1 {
		t.Fatalf("a session after the stalled one ended: servers %v", got)
	}
}

// A link is refused without the member's token (a frame saying why, then
// its end), and a session's link that addresses anything but the gateway
// and its session actors (here the membership) is ended, as a session's
// gRPC stream is refused.
func TestLinkRefusals(t *testing.T) {
	r := newRig(t, nil, ServeOptions{ClusterTokenFile: filepath.Join(t.TempDir(), "cluster.token")})
	t.Run("port", func(t *testing.T) { linkRefusals(t, r, "tcp", r.srv.Addr()) })
	t.Run("socket", func(t *testing.T) { linkRefusals(t, r, "unix", socketOf(r.srv.TokenFile())) })
}

func linkRefusals(t *testing.T, r *rig, network, addr string) {
	ctx := testkit.Ctx(t)
	ended := func(err error) bool {
		var ne net.Error
		return err != nil && !(errors.As(err, &ne) && ne.Timeout())
	}
	open := func(token string) (net.Conn, *bufio.Reader, []byte) {
		t.Helper()
		conn, err := net.Dial(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		// A link the member leaves open fails its read at the test's
		// deadline, as a timeout (ended: an EOF or a reset).
		if dl, ok := ctx.Deadline(); ok {
			_ = conn.SetReadDeadline(dl)
		}
		h, _ := json.Marshal(hello{Token: token, Address: "127.0.0.1:1"})
		if _, err := conn.Write(append([]byte(linkMagic), frame("", h)...)); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		_, answer, err := readFrame(br)
		if err != nil {
			t.Fatalf("the member's answer: %v", err)
		}
		return conn, br, answer
	}
	_, br, answer := open("wrong")
	if !strings.Contains(string(answer), refusal) {
		t.Errorf("a link with a wrong token: answer %q, want the refusal", answer)
	}
	if _, _, err := readFrame(br); !ended(err) {
		t.Errorf("a refused link stays open: %v", err)
	}

	conn, br, answer := open(r.srv.token)
	if len(answer) > 0 {
		t.Fatalf("a link with the token: refused: %q", answer)
	}
	b, _, err := appendFrame(nil, membersName, &cancelMsg{ID: 1})
	if err == nil {
		_, err = conn.Write(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := readFrame(br); !ended(err) {
		t.Errorf("a link that addressed the membership stays open: %v", err)
	}
}

// A link's frames leave in the order they were sent: while one write is
// blocked (a peer not reading), later frames queue behind it, up to
// maxQueued bytes; a sender beyond that waits (and counts as a write in
// progress, which abortLink aborts); when the peer reads, everything
// arrives in order.
func TestLinkQueuesInOrder(t *testing.T) {
	ctx := testkit.Ctx(t)
	near, far := net.Pipe() // a write blocks until the far end reads it
	t.Cleanup(func() { near.Close(); far.Close() })
	l := &link{conn: near, done: make(chan struct{})}
	target := actor.NewPID("x", GatewayName)
	big := json.RawMessage(`"` + strings.Repeat("x", 64<<10) + `"`)
	const n = maxQueued/(64<<10) + 2 // the last ones must wait
	sent := make(chan error, n)
	go func() { sent <- l.send(target, &replyMsg{ID: 1, Result: big}) }()
	testkit.Poll(ctx, t, "the first write to block", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.writing
	})
	go func() {
		for i := 2; i <= n; i++ {
			sent <- l.send(target, &replyMsg{ID: uint64(i), Result: big})
		}
	}()
	testkit.Poll(ctx, t, "the queue to fill until a sender waits", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.writing && l.waiters > 0 && l.sending.Load() >= 2
	})
	r := bufio.NewReader(far)
	for i := 1; i <= n; i++ {
		_, body, err := readFrame(r)
		if err != nil {
			t.Fatal(err)
		}
		m, err := decode(wrapperspb.Bytes(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.(*replyMsg).ID; got != uint64(i) {
			t.Fatalf("frame %d carries reply %d", i, got)
		}
	}
	for i := 0; i < n; i++ {
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
	}
}

// A session that read the member's token file for a loopback address
// links on the Unix socket beside it, and works there; without the socket
// (removed, or a member serving TLS makes none) it links on the port; the
// member removes its socket when it closes.
func TestLinkOverUnixSocket(t *testing.T) {
	r := newRig(t, map[string]config.Server{"ts": testServer(t, nil)}, ServeOptions{})
	ctx := testkit.Ctx(t)
	sock := socketOf(r.srv.TokenFile())
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("no socket beside the token file: %v", err)
	}
	call := func(s *Session) {
		t.Helper()
		res, err := s.CallTool(ctx, "ts", "echo", map[string]any{"message": "over the link"})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].Text, "over the link") {
			t.Fatalf("a call: %+v, %v", res, err)
		}
	}
	s := r.attach(t, AttachOptions{})
	if n := s.link.conn.RemoteAddr().Network(); n != "unix" {
		t.Fatalf("the session's link is on %s; want the Unix socket", n)
	}
	call(s)
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	s2 := r.attach(t, AttachOptions{})
	if n := s2.link.conn.RemoteAddr().Network(); n != "tcp" {
		t.Fatalf("without the socket the link is on %s; want the port", n)
	}
	call(s2)
	call(s)

	r2 := newRig(t, nil, ServeOptions{})
	sock2 := socketOf(r2.srv.TokenFile())
	if _, err := os.Stat(sock2); err != nil {
		t.Fatalf("no socket: %v", err)
	}
	if err := r2.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock2); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket after Close: %v", err)
	}
}
