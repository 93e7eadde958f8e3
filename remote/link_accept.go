package remote

import (
	"bufio"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync/atomic"

	"google.golang.org/grpc/credentials"
)

// linkCreds are a node's gRPC server credentials: after the transport's
// own handshake (TLS when the node serves it), a connection that opens
// with linkMagic is handed out of gRPC to accept, before HTTP/2 starts;
// any other goes on to gRPC as it came (its first byte put back). So a
// link uses the member's one port and its mutual TLS, and gRPC never
// sees it.
type linkCreds struct {
	credentials.TransportCredentials
	// accept takes a link's connection, its first byte read; nil (a
	// session's node) refuses links.
	accept *atomic.Pointer[func(net.Conn)]
}

func (c linkCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		return nil, nil, err
	}
	var first [1]byte
	if _, err := io.ReadFull(conn, first[:]); err != nil {
		conn.Close()
		return nil, nil, err
	}
	if first[0] != linkMagic[0] {
		return &peekedConn{Conn: conn, first: first[0], has: true}, info, nil
	}
	accept := c.accept.Load()
	if accept == nil {
		conn.Close()
		return nil, nil, errors.New("remote: this process takes no links")
	}
	// Still under gRPC's handshake deadline: the rest of the magic and
	// the hello are read before the connection is gRPC's no more.
	(*accept)(conn)
	return nil, nil, credentials.ErrConnDispatched
}

func (c linkCreds) Clone() credentials.TransportCredentials {
	return linkCreds{TransportCredentials: c.TransportCredentials.Clone(), accept: c.accept}
}

// peekedConn gives back the byte linkCreds read first.
type peekedConn struct {
	net.Conn
	first byte
	has   bool
}

func (c *peekedConn) Read(p []byte) (int, error) {
	if c.has && len(p) > 0 {
		p[0], c.has = c.first, false
		return 1, nil
	}
	return c.Conn.Read(p)
}

// maxHello bounds a link's first frame, read before its token is checked.
const maxHello = 4 << 10

// acceptLink takes a session process's link: its magic, its hello with
// the token, then the member's answer. The link is the way to that
// process's sessions (sendTo) until it ends, which ends them.
func (s *Server) acceptLink(conn net.Conn) {
	r := bufio.NewReaderSize(conn, 32<<10)
	magic := make([]byte, len(linkMagic)-1)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != linkMagic[1:] {
		conn.Close()
		return
	}
	id, body, err := readFrameMax(r, maxHello)
	var h hello
	if err != nil || len(id) != 0 || json.Unmarshal(body, &h) != nil || h.Address == "" {
		conn.Close()
		return
	}
	refuse := func(why string) {
		_, _ = conn.Write(frame("", []byte(why)))
		conn.Close()
	}
	if subtle.ConstantTimeCompare([]byte(h.Token), []byte(s.token)) != 1 {
		refuse(refusal)
		return
	}
	// The port answers before the gateway runs (protoactor listens
	// first): a link that came that early waits, as a session's stream.
	if !s.links.ready() {
		refuse(errLinksClosed.Error())
		return
	}
	l := &link{conn: conn, done: make(chan struct{}), sessions: true}
	s.links.mu.Lock()
	switch {
	case s.links.closed:
		s.links.mu.Unlock()
		refuse(errLinksClosed.Error())
		return
	case s.links.by[h.Address] != nil:
		s.links.mu.Unlock()
		refuse("remote: " + h.Address + " has a link already")
		return
	}
	if s.links.by == nil {
		s.links.by = map[string]*link{}
	}
	s.links.by[h.Address] = l
	s.links.mu.Unlock()
	if _, err := conn.Write(frame("", nil)); err != nil {
		conn.Close()
	}
	go l.read(s.n, r, func(error) { s.linkLost(h.Address, l) })
}
