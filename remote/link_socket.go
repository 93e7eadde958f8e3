package remote

import (
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// A member serving without TLS also takes links on a Unix socket beside
// its token file (<host>_<port>.sock next to <host>_<port>.token), and a
// session that read that token file for a loopback address dials the
// socket first, falling back to the TCP port when it cannot. A link
// there is the same link (linkMagic, the token in its first frame,
// checked as on the port): only the transport differs, and a Unix
// socket's write and read cost less than loopback TCP's, which carries
// every message twice through the TCP stack (docs/performance.md). With
// TLS there is no socket: the member's certificate and the session's are
// checked on the port only. A session elsewhere (another machine, or
// another network namespace: its address is not loopback) never uses it.

// helloTimeout bounds how long a connection on the socket may take to
// send its magic and hello (gRPC's handshake deadline on the port).
const helloTimeout = 10 * time.Second

// socketOf is the Unix socket beside the token file file.
func socketOf(file string) string { return strings.TrimSuffix(file, ".token") + ".sock" }

// loopbackAddr says addr's host is loopback (localhost, 127.0.0.0/8, ::1).
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// socketLinks is the member's Unix socket and the connections on it not
// yet links.
type socketLinks struct {
	ln   net.Listener
	path string
	wg   sync.WaitGroup

	mu      sync.Mutex
	pending map[net.Conn]bool // guarded by mu; nil once closed
}

// listenSocket takes links on the socket beside the token file, when the
// member serves without TLS; a socket that cannot be made (a path too
// long for one, a file system without them) leaves the port alone.
func (s *Server) listenSocket() {
	if s.opts.TLS != nil || s.file == "" || s.sock != nil {
		return
	}
	path := socketOf(s.file)
	_ = os.Remove(path) // a member that died left it: the address is this member's now
	ln, err := net.Listen("unix", path)
	if err != nil {
		s.logger.Debug("remote: no Unix socket for links", "err", err)
		return
	}
	sl := &socketLinks{ln: ln, path: path, pending: map[net.Conn]bool{}}
	s.sock = sl
	sl.wg.Add(1)
	go s.acceptSockets(sl)
}

func (s *Server) acceptSockets(sl *socketLinks) {
	defer sl.wg.Done()
	for {
		conn, err := sl.ln.Accept()
		if err != nil {
			return
		}
		sl.mu.Lock()
		if sl.pending == nil {
			sl.mu.Unlock()
			conn.Close()
			return
		}
		sl.pending[conn] = true
		sl.wg.Add(1)
		sl.mu.Unlock()
		go s.acceptSocketLink(sl, conn)
	}
}

// acceptSocketLink reads a connection's first byte and hands it to
// acceptLink, as the port's credentials do; a connection that does not
// finish its hello within helloTimeout (or before Close) is closed.
func (s *Server) acceptSocketLink(sl *socketLinks, conn net.Conn) {
	defer sl.wg.Done()
	t := s.clock.AfterFunc(helloTimeout, func() { sl.abort(conn) })
	defer t.Stop()
	var first [1]byte
	if _, err := io.ReadFull(conn, first[:]); err != nil || first[0] != linkMagic[0] {
		sl.abort(conn)
		return
	}
	s.acceptLink(conn)
	sl.mu.Lock()
	if sl.pending != nil {
		delete(sl.pending, conn) // a link now, or closed: no longer ours
	}
	sl.mu.Unlock()
}

// abort closes a connection still waiting for its hello.
func (sl *socketLinks) abort(conn net.Conn) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.pending != nil && sl.pending[conn] {
		delete(sl.pending, conn)
		conn.Close()
	}
}

// close stops taking links on the socket, closes the connections still
// in their hello, waits for its goroutines and removes the socket.
func (sl *socketLinks) close() {
	if sl == nil {
		return
	}
	_ = sl.ln.Close()
	sl.mu.Lock()
	for c := range sl.pending {
		c.Close()
	}
	sl.pending = nil
	sl.mu.Unlock()
	sl.wg.Wait()
	_ = os.Remove(sl.path)
}
