package remote

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/mcprt/mcprt/clock"
)

// link is a session process's own connection to its member, carrying the
// hot messages both ways: a session's requests, cancels, heartbeats and
// answers up, the member's replies, questions and session ends down. It
// is a TCP connection to the member's listening address, told apart from
// gRPC's by its first bytes (linkMagic) and handed out of the member's
// gRPC server before HTTP/2 starts (link_accept.go): the same port, the
// same mutual TLS when the member serves it, and the token in its first
// frame. Each side writes a message at once on the goroutine that made
// it (one write per message, or one for several that wait together); one
// goroutine per side reads and runs the addressed actor inline, as
// protoactor's endpoint reader would. gRPC would add a hand-off to its
// writer goroutine and one from its reader to the stream's, and HTTP/2
// and protobuf framing, on each side of every message
// (docs/performance.md).
//
// The connection's end (the peer died, closed it, or it was aborted) is
// told to lost, once.
type link struct {
	conn net.Conn
	done chan struct{} // closed when the reading goroutine has ended
	// sessions: frames may address only the gateway and the session
	// actors under it (a session's link on its member, as a session's
	// gRPC stream: cluster_auth.go); another target ends the link.
	sessions bool

	mu sync.Mutex // guards the fields below
	// out holds frames waiting for the write in progress; that write's
	// writer writes them next (a caller never waits for another's
	// write, and waiting frames leave together).
	out     []byte
	spare   []byte     // the last written buffer, reused for out
	writing bool       // a writer is writing out now
	werr    error      // the first write error (or close): later sends fail with it
	cond    *sync.Cond // senders waiting for a full queue to drain (made on first use)
	waiters int

	sending atomic.Int32 // writers in a write now (a blocked one stays counted)
	ended   atomic.Bool  // the connection ended (set before lost is told)
}

// linkMagic opens a link; no HTTP/2 connection preface ("PRI * ...")
// begins with its first byte.
const linkMagic = "MCPRT-LINK/1\n"

// maxFrame bounds a frame a link reads (the runtime's own bound on a
// server's message is 16 MiB).
const maxFrame = 32 << 20

// maxQueued bounds the frames waiting for a write in progress; a sender
// finding more waits for the write (backpressure on a stalled peer).
const maxQueued = 1 << 20

// errLinksClosed refuses a new link once the member is closing.
var errLinksClosed = errors.New("remote: the member is closing")

// hello is a link's first frame (id ""): the dialling node's token and
// its protoactor address (where the member's deliveries go, and the key
// of the session's link on the member). The member answers with an empty
// frame, or a frame holding why it refused and closes the connection.
type hello struct {
	Token   string `json:"token"`
	Address string `json:"address"`
}

// dialLink connects to the member at addr with token, announcing node n:
// on its Unix socket sock when there is one ("": none; link_socket.go),
// else on its port. lost is told the connection's end.
func dialLink(ctx context.Context, n *node, addr, sock, token string, lost func(error)) (*link, error) {
	var d net.Dialer
	var conn net.Conn
	var err error
	if sock != "" {
		if conn, err = d.DialContext(ctx, "unix", sock); err != nil {
			conn = nil // the port, then
		}
	}
	if conn == nil {
		raw, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("remote: %s: %w", addr, err)
		}
		if conn, _, err = n.tls.clientCreds().ClientHandshake(ctx, addr, raw); err != nil {
			raw.Close()
			return nil, fmt.Errorf("remote: connecting to %s: %w", addr, err)
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	h, _ := json.Marshal(hello{Token: token, Address: n.addr})
	b := append([]byte(linkMagic), frame("", h)...)
	r := bufio.NewReaderSize(conn, 32<<10)
	_, err = conn.Write(b)
	var answer []byte
	if err == nil {
		_, answer, err = readFrame(r)
	}
	if err == nil && len(answer) > 0 {
		err = errors.New(string(answer))
	}
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("remote: connecting to %s: %w", addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	l := &link{conn: conn, done: make(chan struct{})}
	go l.read(n, r, lost)
	return l, nil
}

// read delivers the frames that arrive to their actors on n, inline,
// until the connection ends.
func (l *link) read(n *node, r *bufio.Reader, lost func(error)) {
	defer close(l.done)
	var pid *actor.PID
	for {
		id, body, err := readFrame(r)
		if err != nil {
			l.ended.Store(true)
			l.conn.Close()
			lost(err)
			return
		}
		if l.sessions && !sessionTarget(id) {
			l.ended.Store(true)
			l.conn.Close()
			lost(errNotSessionTarget)
			return
		}
		if pid == nil || pid.Id != string(id) { // mostly the same actor
			pid = actor.NewPID(n.addr, string(id))
		}
		n.sys.Root.Send(pid, &wrapperspb.BytesValue{Value: body})
	}
}

// errNotSessionTarget ends a session's link that addressed another actor.
var errNotSessionTarget = errors.New("remote: a session may address only the gateway and its session actor")

// sessionTarget reports whether id is the gateway or an actor under it.
func sessionTarget(id []byte) bool {
	return string(id) == GatewayName || len(id) > len(GatewayName) && string(id[:len(GatewayName)]) == GatewayName && id[len(GatewayName)] == '/'
}

// send writes one wire message to target on the other side.
func (l *link) send(target *actor.PID, m any) error {
	bp := frames.Get().(*[]byte)
	f, buf, err := appendFrame(*bp, target.Id, m) // a new buffer's room: frameRoom
	if err == nil {
		err = l.write(f) // f is free again when write returns
	}
	if buf != nil && cap(buf) <= maxPooledFrame {
		*bp = buf[:0]
		frames.Put(bp)
	}
	return err
}

// frames are buffers for the frames sent (one per sender at a time).
var frames = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledFrame bounds the buffers kept for reuse.
const maxPooledFrame = 64 << 10

// write writes a frame, or queues it for the write in progress.
func (l *link) write(b []byte) error {
	l.mu.Lock()
	for l.writing && len(l.out) >= maxQueued && l.werr == nil {
		// A peer that stopped reading: wait for the write in progress.
		l.waitLocked()
	}
	if l.werr != nil {
		err := l.werr
		l.mu.Unlock()
		return err
	}
	if l.writing {
		l.out = append(l.out, b...)
		l.mu.Unlock()
		return nil
	}
	l.writing = true
	l.mu.Unlock()
	l.sending.Add(1)
	_, err := l.conn.Write(b)
	l.mu.Lock()
	for err == nil && len(l.out) > 0 {
		out := l.out
		l.out = l.spare[:0]
		l.wakeLocked()
		l.mu.Unlock()
		_, err = l.conn.Write(out)
		l.mu.Lock()
		l.spare = out[:0]
	}
	if err != nil && l.werr == nil {
		l.werr = err
		l.out = nil
	}
	l.writing = false
	l.wakeLocked()
	l.mu.Unlock()
	l.sending.Add(-1)
	return err
}

// waitLocked waits for the write in progress to take the queue or end;
// l.mu is held. The wait counts as a write in progress (abortLink).
func (l *link) waitLocked() {
	if l.cond == nil {
		l.cond = sync.NewCond(&l.mu)
	}
	l.waiters++
	l.sending.Add(1)
	l.cond.Wait()
	l.sending.Add(-1)
	l.waiters--
}

// wakeLocked wakes the senders waiting in waitLocked; l.mu is held.
func (l *link) wakeLocked() {
	if l.waiters > 0 {
		l.cond.Broadcast()
	}
}

// close ends the connection after what was sent (the other side reads to
// its end, then closes it), waiting at most linger on clk, then closes it.
func (l *link) close(clk clock.Clock, linger time.Duration) {
	if linger <= 0 {
		l.conn.Close()
	}
	t := clk.AfterFunc(linger, func() { l.conn.Close() })
	defer t.Stop()
	l.mu.Lock()
	for l.writing && l.werr == nil {
		l.waitLocked()
	}
	if l.werr == nil {
		l.werr = errLinkClosed
	}
	cw, half := l.conn.(interface{ CloseWrite() error })
	if half {
		_ = cw.CloseWrite()
	}
	l.mu.Unlock()
	if !half {
		l.conn.Close()
	}
	<-l.done
	l.conn.Close()
}

// errLinkClosed fails a send after close.
var errLinkClosed = errors.New("remote: the link is closed")

// frame is one frame: its length, the target actor's id, the body.
func frame(id string, body []byte) []byte {
	b := make([]byte, binary.MaxVarintLen64, binary.MaxVarintLen64+binary.MaxVarintLen64+len(id)+len(body))
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(append(b, id...), body...)
	return sealFrame(b)
}

// appendFrame is frame(id, m's envelope), built in one buffer (b's, when
// it has room; nil: one made to fit most messages at once). buf is the
// whole buffer, frame its end that is the frame.
func appendFrame(b []byte, id string, m any) (frame, buf []byte, err error) {
	if b == nil {
		b = make([]byte, 0, frameRoom(m))
	}
	b = append(b[:0], make([]byte, binary.MaxVarintLen64)...)
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	if b, err = appendEnvelope(b, m); err != nil {
		return nil, nil, err
	}
	return sealFrame(b), b, nil
}

// frameRoom is the room to make for m's frame: its bulk (arguments, a
// result) and more than enough for the rest.
func frameRoom(m any) int {
	const rest = 160
	switch m := m.(type) {
	case *requestMsg:
		return rest + len(m.Name) + len(m.Args)
	case *replyMsg:
		return rest + len(m.Result)
	}
	return 2 * rest
}

// sealFrame writes the length of what follows b's first MaxVarintLen64
// bytes right before it, and returns the frame from there.
func sealFrame(b []byte) []byte {
	n := uint64(len(b) - binary.MaxVarintLen64)
	start := binary.MaxVarintLen64 - varintLen(n)
	binary.PutUvarint(b[start:], n)
	return b[start:]
}

func varintLen(n uint64) int {
	var tmp [binary.MaxVarintLen64]byte
	return binary.PutUvarint(tmp[:], n)
}

// readFrame reads one frame: the target's id and the body.
func readFrame(r *bufio.Reader) (id, body []byte, err error) {
	return readFrameMax(r, maxFrame)
}

// readFrameMax reads a frame of at most limit bytes.
func readFrameMax(r *bufio.Reader, limit uint64) (id, body []byte, err error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, nil, err
	}
	if n > limit {
		return nil, nil, fmt.Errorf("remote: a frame of %d bytes is over the limit of %d", n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, nil, err
	}
	idLen, k := binary.Uvarint(b)
	if k <= 0 || idLen > uint64(len(b)-k) {
		return nil, nil, errors.New("remote: a malformed frame")
	}
	return b[k : k+int(idLen)], b[k+int(idLen):], nil
}
