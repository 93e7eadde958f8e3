package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcprt/mcprt/internal/mcpline"
)

// The test server runs on mcp-go's server (not linked into cmd/runtime);
// mcpgoBackend makes it an mcpline.Backend for the line and legacy SSE
// fronts. Each session is an mcp-go client session whose notification
// channel a pump drains to the peer.

// notificationBuffer is the capacity of a session's notification channel.
// mcp-go drops a notification when the channel is full, so it is generous.
const notificationBuffer = 1024

// barrierMethod marks an internal flush marker on a session's notification
// channel. It is consumed by the pump and never reaches the peer.
const barrierMethod = "$mcprt/barrier"

type mcpgoBackend struct{ srv *server.MCPServer }

// Open registers an mcp-go session and starts its notification pump.
func (b mcpgoBackend) Open(ctx context.Context, id string, send func([]byte) error) (mcpline.Session, error) {
	gone := make(chan struct{})
	ls := &lineSession{id: id, ch: make(chan mcp.JSONRPCNotification, notificationBuffer), asks: &peerAsks{send: send, gone: gone}}
	if err := b.srv.RegisterSession(ctx, ls); err != nil {
		return nil, fmt.Errorf("register session %q: %w", id, err)
	}
	s := &mcpgoSession{srv: b.srv, ls: ls, send: send, stop: make(chan struct{}), gone: gone}
	go s.pump()
	return s, nil
}

type mcpgoSession struct {
	srv  *server.MCPServer
	ls   *lineSession
	send func([]byte) error
	stop chan struct{}
	gone chan struct{} // closed when the pump has exited
}

// Handle runs mcp-go on one message; for a request, the notifications the
// handler queued are written before the reply is returned.
func (s *mcpgoSession) Handle(ctx context.Context, msg []byte, _ http.Header, _ func([]byte) error) []byte {
	if s.ls.asks.answered(msg) {
		return nil // the client's answer to the server's own request
	}
	resp := s.srv.HandleMessage(s.srv.WithContext(ctx, s.ls), msg)
	if resp == nil {
		return nil
	}
	s.flush()
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(mcpline.NewErrorReply(nil, mcp.INTERNAL_ERROR, "cannot encode message: "+err.Error()))
	}
	return b
}

// Close writes the notifications still queued and unregisters the session.
func (s *mcpgoSession) Close() {
	close(s.stop)
	<-s.gone
	s.srv.UnregisterSession(context.Background(), s.ls.id)
}

// pump writes the session's notifications until stop is closed, then
// writes whatever is still queued and exits.
func (s *mcpgoSession) pump() {
	defer close(s.gone)
	for {
		select {
		case n := <-s.ls.ch:
			s.forward(n)
		case <-s.stop:
			for {
				select {
				case n := <-s.ls.ch:
					s.forward(n)
				default:
					return
				}
			}
		}
	}
}

func (s *mcpgoSession) forward(n mcp.JSONRPCNotification) {
	if n.Method == barrierMethod {
		if ack, ok := n.Params.AdditionalFields["ack"].(chan struct{}); ok {
			close(ack)
		}
		return
	}
	b, err := json.Marshal(n)
	if err == nil {
		_ = s.send(b)
	}
}

// flush returns once every notification queued before the call has been
// written, so that notifications a handler sent precede its response.
func (s *mcpgoSession) flush() {
	ack := make(chan struct{})
	marker := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: barrierMethod,
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"ack": ack}},
		},
	}
	select {
	case s.ls.ch <- marker:
	case <-s.gone:
		return
	}
	select {
	case <-ack:
	case <-s.gone:
	}
}

// lineSession is the mcp-go client session of one line connection or
// legacy SSE session.
type lineSession struct {
	id          string
	ch          chan mcp.JSONRPCNotification
	asks        *peerAsks // requests to the client (mcpgo_asks.go)
	initialized atomic.Bool

	mu   sync.Mutex
	info mcp.Implementation     // guarded by mu
	caps mcp.ClientCapabilities // guarded by mu
}

var _ server.SessionWithClientInfo = (*lineSession)(nil)

// SessionID returns the session's identifier.
func (s *lineSession) SessionID() string { return s.id }

// NotificationChannel returns the channel the pump drains to the peer.
func (s *lineSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.ch }

// Initialize marks the session ready for notifications.
func (s *lineSession) Initialize() { s.initialized.Store(true) }

// Initialized reports whether Initialize has been called.
func (s *lineSession) Initialized() bool { return s.initialized.Load() }

// GetClientInfo returns the client identity recorded at initialization.
func (s *lineSession) GetClientInfo() mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// SetClientInfo records the client identity.
func (s *lineSession) SetClientInfo(info mcp.Implementation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = info
}

// GetClientCapabilities returns the client capabilities recorded at
// initialization.
func (s *lineSession) GetClientCapabilities() mcp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// SetClientCapabilities records the client capabilities.
func (s *lineSession) SetClientCapabilities(caps mcp.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = caps
}
