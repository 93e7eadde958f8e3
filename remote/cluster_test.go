package remote

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// addrsOf are the members' addresses (never their tokens).
func addrsOf(ms []memberInfo) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Addr)
	}
	return out
}

// liveAddrs are the addresses of the members r's membership has live.
func liveAddrs(r *rig) []string {
	return addrsOf(r.srv.member.live())
}

// sendView opens a stream to addr with token, as a member's node would,
// and sends a view claiming a member at fake; it returns how the stream
// ended (nil: it stayed open after the view was taken in).
func sendView(ctx context.Context, t *testing.T, addr, token, fake string) error {
	t.Helper()
	conn, err := grpc.DialContext(ctx, addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(tokenCreds(token)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := remote.NewRemotingClient(conn).Receive(ctx)
	if err != nil {
		return err
	}
	// A refused stream's Send says only EOF; Recv gives the status.
	if err := stream.Send(&remote.RemoteMessage{MessageType: &remote.RemoteMessage_ConnectRequest{ConnectRequest: &remote.ConnectRequest{
		ConnectionType: &remote.ConnectRequest_ServerConnection{ServerConnection: &remote.ServerConnection{SystemId: "fake", Address: fake}}}}}); err != nil {
		_, err = stream.Recv()
		return err
	}
	if _, err := stream.Recv(); err != nil { // the connect response, or the refusal
		return err
	}
	v, _ := json.Marshal(viewMsg{From: memberInfo{ID: "fake", Addr: fake, Servers: []string{"stolen"}}})
	data, _ := proto.Marshal(wrapperspb.String(string(v)))
	if err := stream.Send(&remote.RemoteMessage{MessageType: &remote.RemoteMessage_MessageBatch{MessageBatch: &remote.MessageBatch{
		TypeNames: []string{"google.protobuf.StringValue"},
		Targets:   []*actor.PID{actor.NewPID(addr, membersName)},
		Envelopes: []*remote.MessageEnvelope{{MessageData: data}},
	}}}); err != nil {
		_, err = stream.Recv()
		return err
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	_, err = stream.Recv()
	if status.Code(err) == codes.OK || status.Code(err) == codes.Unknown && err.Error() == "EOF" {
		return nil
	}
	return err
}

// A would-be member is refused without the cluster token: with a wrong
// one its stream is refused before protoactor reads it; with the
// member's own token (a session's credential) its message to the
// membership is refused and it does not join. With the cluster token the
// same view is taken in (the control).
func TestClusterRefusesUnauthenticatedMembers(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	r := newRig(t, nil, ServeOptions{ClusterTokenFile: ct})
	ctx := testkit.Ctx(t)
	if err := sendView(ctx, t, r.srv.Addr(), "wrong", "127.0.0.1:1"); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a view with a wrong token: %v, want Unauthenticated", err)
	}
	if err := sendView(ctx, t, r.srv.Addr(), r.srv.token, "127.0.0.1:2"); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a view with a session's token: %v, want PermissionDenied", err)
	}
	if got := liveAddrs(r); len(got) != 0 {
		t.Fatalf("the membership took in a refused member: %v", got)
	}
	tok, err := readToken(ct)
	if err != nil {
		t.Fatal(err)
	}
	if err := sendView(ctx, t, r.srv.Addr(), tok, "127.0.0.1:3"); err != nil {
		t.Errorf("a view with the cluster token: %v", err)
	}
	testkit.Poll(ctx, t, "the member with the cluster token to join", func() bool { return slices.Contains(liveAddrs(r), "127.0.0.1:3") })
	if fi, err := os.Stat(ct); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cluster token file: %v, want mode 0600", err)
	}
}

// Three members find each other from one seed and see each other's
// servers as cluster kinds; a member that closes says so and is dropped
// then, its servers known as gone (a's member timeout is far beyond the
// test: only the leaving can drop it, told by its leaving view or by
// protoactor's gossip, whichever comes first).
func TestClusterMembership(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	a := newRig(t, map[string]config.Server{"one": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct, MemberTimeout: time.Hour})
	seed := []Peer{{Addr: a.srv.Addr()}}
	b := newRig(t, map[string]config.Server{"two": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct, Peers: seed})
	c := newRig(t, map[string]config.Server{"two": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct, Peers: seed})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "a to have b and c", func() bool { return len(liveAddrs(a)) == 2 })
	testkit.Poll(ctx, t, "b to find c through a", func() bool { return slices.Contains(liveAddrs(b), c.srv.Addr()) })
	if got := a.srv.member.running("two"); len(got) != 2 {
		t.Fatalf("members running two, seen from a: %v", addrsOf(got))
	}
	if got := b.srv.member.running("one"); len(got) != 1 || got[0].Addr != a.srv.Addr() {
		t.Fatalf("members running one, seen from b: %v", addrsOf(got))
	}

	_ = c.srv.Close()
	testkit.Poll(ctx, t, "a to drop c on its leaving", func() bool { return !slices.Contains(liveAddrs(a), c.srv.Addr()) })
	if gone := a.srv.member.gone("two"); len(gone) != 1 || gone[0].Addr != c.srv.Addr() {
		t.Errorf("a's members gone running two: %v, want c", addrsOf(gone))
	}
	if got := addrsOf(a.srv.member.running("two")); len(got) != 1 || got[0] != b.srv.Addr() {
		t.Errorf("members running two after c left: %v, want b", got)
	}
}

// A member that stops without a word is dropped once it has not been
// heard from for the member timeout, and its servers are then known as
// gone.
func TestClusterDropsUnheardMember(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	a := newRig(t, nil, ServeOptions{ClusterTokenFile: ct})
	b := newRig(t, map[string]config.Server{"two": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}}})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "a to have b", func() bool { return len(liveAddrs(a)) == 1 })
	// b stops without a word (as if killed).
	_ = b.srv.member.Shutdown(false)
	_ = b.srv.Close()
	testkit.Poll(ctx, t, "a to drop b", func() bool { return len(a.srv.member.gone("two")) == 1 })
	if got := liveAddrs(a); len(got) != 0 {
		t.Errorf("a's live members after b left: %v", got)
	}
}

// Members serving mutual TLS form a cluster over it (their certificates
// allow both uses: each dials the other) and forward to each other: a
// session of b calls a's server.
func TestClusterOverMutualTLS(t *testing.T) {
	ca := testkit.NewCA(t, "cluster-ca")
	member := func(name string) (*ServerTLS, *ClientTLS) {
		cert, key := ca.Issue(t, name, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
		return &ServerTLS{CertFile: cert, KeyFile: key, ClientCAFile: ca.File}, &ClientTLS{CAFile: ca.File, CertFile: cert, KeyFile: key}
	}
	ct := filepath.Join(t.TempDir(), "cluster.token")
	aTLS, aPeer := member("a")
	a := newRig(t, map[string]config.Server{"one": testServer(t, nil)}, ServeOptions{ClusterTokenFile: ct, TLS: aTLS, PeerTLS: aPeer})
	bTLS, bPeer := member("b")
	b := newRig(t, nil, ServeOptions{ClusterTokenFile: ct, TLS: bTLS, PeerTLS: bPeer, Peers: []Peer{{Addr: a.srv.Addr()}}})
	ctx := testkit.Ctx(t)
	testkit.Poll(ctx, t, "a and b to have each other", func() bool { return len(liveAddrs(a)) == 1 && len(liveAddrs(b)) == 1 })

	cert, key := ca.Issue(t, "session", x509.ExtKeyUsageClientAuth)
	s := b.attach(t, AttachOptions{TLS: &ClientTLS{CAFile: ca.File, CertFile: cert, KeyFile: key}})
	res, err := s.CallTool(ctx, "one", "echo", map[string]any{"message": "a over tls"})
	if err != nil {
		t.Fatalf("a's server through b over mutual TLS: %v", err)
	}
	if bs, _ := json.Marshal(res.Content); res.IsError || !strings.Contains(string(bs), "a over tls") {
		t.Fatalf("a's server through b answered %s", bs)
	}
}
