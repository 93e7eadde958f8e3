package transports

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
)

// limitedTransport wraps an http.RoundTripper so that no server can make the
// client buffer without bound: a JSON body over MaxFrame, or one SSE event
// over MaxFrame (plus framing), fails the read with ErrFrameTooLarge. It
// also records HTTP statuses (the most recent one, and each request's in
// the statusSlot its context carries), which decide the fallback to legacy
// HTTP+SSE and make error messages precise, and whether any body broke the
// limit, which becomes the reason a connection closed.
type limitedTransport struct {
	base http.RoundTripper

	lastStatus atomic.Int32 // status of the most recent response
	violation  atomic.Bool  // some body broke the frame limit
	// claim, when set, offers every notification read from an SSE body to
	// the connection's stream router; claimed ones are removed from what
	// the client reads.
	claim func(method string, params json.RawMessage) bool
	// router, when set, also hears of every response to one of its
	// streams as it is read, so frames after it are late (the legacy GET
	// stream carries responses and notifications in one order).
	router *router
	// serverRequest, when set, receives every server-to-client request
	// read from an SSE body (a response stream, the standalone GET stream,
	// the legacy GET stream), which is removed from what the client reads: the
	// runtime answers it, with no ceiling on how long a person takes.
	// caller is the caller tag of the request whose response stream
	// it came on (nil on a GET stream).
	serverRequest func(id json.RawMessage, method string, params json.RawMessage, caller any)
	// legacy marks a legacy HTTP+SSE connection: its GET stream's
	// endpoint event is checked for the origin (checkEndpoint), and fail
	// hears of one on another origin.
	legacy bool
	fail   func(error)
	// foreign and unknown judge and count responses on streams without a
	// statusSlot (the legacy GET stream): see unknown.go.
	foreign func(ev []byte, want string) bool
	unknown func()
	// budget is the Dialer's response budget (nil: none).
	budget *budget
}

func (t *limitedTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	defer func() {
		if p := recovered("HTTP round trip", recover()); p != nil {
			if resp != nil {
				_ = resp.Body.Close()
			}
			resp, err = nil, p
		}
	}()
	resp, err = t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	t.lastStatus.Store(int32(resp.StatusCode))
	slot, _ := req.Context().Value(statusKey{}).(*statusSlot)
	if slot != nil {
		slot.status.Store(int32(resp.StatusCode))
	}
	probeRefusal(req, resp)
	if slot != nil && slot.sent != nil {
		slot.sent() // the request is out: its response has begun
	}
	media := mediaType(resp.Header.Get("Content-Type"))
	if media != "text/event-stream" && resp.ContentLength > MaxFrame {
		// Refused before reading a byte of it.
		t.violation.Store(true)
		_ = resp.Body.Close()
		return nil, ErrFrameTooLarge
	}
	if media == "text/event-stream" {
		tap := &sseTap{rc: resp.Body, limit: MaxFrame + sseFraming, owner: t, slot: slot, charge: charge{b: t.budget}}
		if t.legacy && req.Method == http.MethodGet {
			tap.base = req.URL
		}
		resp.Body = tap
	} else {
		resp.Body = &bodyLimitReader{rc: resp.Body, left: MaxFrame + 1, owner: t, slot: slot, charge: charge{b: t.budget}}
	}
	return resp, nil
}

// mediaType is the media type of a Content-Type value, lower-cased and
// without parameters ("" when it does not parse). The two values servers
// send on every response are recognised without mime.ParseMediaType's
// allocations.
func mediaType(contentType string) string {
	switch contentType {
	case "application/json", "text/event-stream":
		return contentType
	}
	media, _, _ := mime.ParseMediaType(contentType)
	return media
}

// bodyLimitReader fails once more than MaxFrame bytes have been read (it
// reads at most MaxFrame+1), and when what it has read would take the
// response bytes in flight over the budget; it holds its bytes in the
// budget until Close.
type bodyLimitReader struct {
	rc     io.ReadCloser
	left   int64
	owner  *limitedTransport
	slot   *statusSlot
	read   int64
	charge charge
	mu     sync.Mutex // Read and Close may race when a context ends
}

func (b *bodyLimitReader) Read(p []byte) (n int, err error) {
	defer func() {
		if pe := recovered("HTTP body reader", recover()); pe != nil {
			n, err = 0, pe
		}
	}()
	if b.left <= 0 {
		b.owner.violation.Store(true)
		return 0, ErrFrameTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err = b.rc.Read(p)
	b.left -= int64(n)
	b.mu.Lock()
	b.read += int64(n)
	ok := b.charge.set(b.read)
	b.mu.Unlock()
	if !ok {
		if b.slot != nil {
			b.slot.overBudget.Store(true)
		}
		return 0, errBudget
	}
	if b.left <= 0 && err == nil {
		b.owner.violation.Store(true)
		return n, ErrFrameTooLarge
	}
	return n, err
}

func (b *bodyLimitReader) Close() error {
	b.mu.Lock()
	b.charge.set(0)
	b.mu.Unlock()
	return b.rc.Close()
}
