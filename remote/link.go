package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"

	"github.com/mcprt/mcprt/clock"
)

// link is a session's own stream to its member's protoactor endpoint: the
// protocol protoactor's endpoint writer speaks (a ConnectRequest, then
// message batches), written on the sender's goroutine. Protoactor's own
// writer would hand every message to a goroutine it starts per activation
// and batch from there, one more hand-off per request
// (docs/performance.md); a session's messages are few kinds, small, and
// sent by the callers waiting for them, so writing them at once is both
// faster and natural backpressure. The member answers through protoactor
// as before (its replies must never block a session actor).
//
// The stream's end (the member died, or closed it) is told to lost, once.
type link struct {
	conn   *grpc.ClientConn
	stream remote.Remoting_ReceiveClient
	done   chan struct{} // closed when the stream has ended

	mu      sync.Mutex   // serialises Send (a gRPC stream allows one sender at a time)
	sending atomic.Int32 // writers in send now (a blocked one stays counted)
	ended   atomic.Bool  // the stream ended (set before lost is told)
}

// errLinksClosed refuses a new link once the member is closing.
var errLinksClosed = errors.New("remote: the member is closing")

// bytesValueName is the protobuf name of the wire messages' type.
const bytesValueName = "google.protobuf.BytesValue"

// dialLink opens the stream to addr with token, announcing this node.
func dialLink(ctx context.Context, n *node, addr, token string, lost func(error)) (*link, error) {
	conn, err := grpc.Dial(addr, dialOptions(token, n.tls)...)
	if err != nil {
		return nil, fmt.Errorf("remote: %s: %w", addr, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	stream, err := remote.NewRemotingClient(conn).Receive(sctx)
	if err == nil {
		err = stream.Send(&remote.RemoteMessage{MessageType: &remote.RemoteMessage_ConnectRequest{ConnectRequest: &remote.ConnectRequest{
			ConnectionType: &remote.ConnectRequest_ServerConnection{ServerConnection: &remote.ServerConnection{SystemId: n.sys.ID, Address: n.addr}}}}})
	}
	if err == nil {
		err = waitConnected(ctx, stream)
	}
	if err != nil {
		cancel()
		conn.Close()
		return nil, fmt.Errorf("remote: connecting to %s: %w", addr, err)
	}
	l := &link{conn: conn, stream: stream, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer conn.Close() // an ended stream leaves no connection behind
		defer cancel()
		for {
			if _, err := stream.Recv(); err != nil {
				l.ended.Store(true)
				lost(err)
				return
			}
			// Anything else the member sends on it (a DisconnectRequest
			// when it stops) precedes the stream's end.
		}
	}()
	return l, nil
}

// waitConnected reads the member's ConnectResponse, bounded by ctx.
func waitConnected(ctx context.Context, stream remote.Remoting_ReceiveClient) error {
	got := make(chan error, 1)
	go func() {
		m, err := stream.Recv()
		if err == nil && m.GetConnectResponse() == nil {
			err = errors.New("no connect response")
		}
		got <- err
	}()
	select {
	case err := <-got:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send writes one wire message to target on the member.
func (l *link) send(target *actor.PID, m any) error {
	data, err := marshalled(m)
	if err != nil {
		return err
	}
	batch := &remote.RemoteMessage{MessageType: &remote.RemoteMessage_MessageBatch{MessageBatch: &remote.MessageBatch{
		TypeNames: []string{bytesValueName},
		Targets:   []*actor.PID{target},
		Envelopes: []*remote.MessageEnvelope{{MessageData: data}},
	}}}
	l.sending.Add(1)
	defer l.sending.Add(-1)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stream.Send(batch)
}

// close ends the stream after what was sent (the member reads to its end,
// then ends it), waiting at most linger on clk, then closes the
// connection.
func (l *link) close(clk clock.Clock, linger time.Duration) {
	l.mu.Lock()
	_ = l.stream.CloseSend()
	l.mu.Unlock()
	t := clk.AfterFunc(linger, func() { l.conn.Close() })
	<-l.done
	t.Stop()
	l.conn.Close()
}
