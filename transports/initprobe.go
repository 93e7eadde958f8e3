package transports

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"
)

// A 2026-07-28 server that serves only 2026-07-28 answers initialize with
// HTTP 400 and a JSON-RPC error (unsupported protocol version). The
// Streamable HTTP client takes any 4xx answer to initialize for a legacy
// HTTP+SSE server without reading it (errLegacyServer); the specification says such a body, a recognized modern JSON-RPC
// error, means a modern server (basic/transports/streamable-http, backward
// compatibility). initProbe keeps that error for the handshake, which then
// tries server/discover instead of legacy SSE.

// maxProbeBody bounds the error body read on a refused initialize.
const maxProbeBody = 64 << 10

type initProbeKey struct{}

// initProbe records the JSON-RPC error a refused initialize carried.
type initProbe struct {
	mu   sync.Mutex
	code int
	msg  string
	ok   bool
}

func withInitProbe(ctx context.Context, p *initProbe) context.Context {
	return context.WithValue(ctx, initProbeKey{}, p)
}

// refusal returns the recorded JSON-RPC error, if any.
func (p *initProbe) refusal() (code int, msg string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.code, p.msg, p.ok
}

// probeRefusal reads a 400, 404 or 405 JSON answer to a request whose
// context carries an initProbe, records the JSON-RPC error it is, and puts
// the body back for the client.
func probeRefusal(req *http.Request, resp *http.Response) {
	p, _ := req.Context().Value(initProbeKey{}).(*initProbe)
	if p == nil || req.Method != http.MethodPost {
		return
	}
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
	default:
		return
	}
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media != "application/json" {
		return
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	if err != nil {
		return
	}
	var msg struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    *int   `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" || msg.Error == nil || msg.Error.Code == nil {
		return
	}
	p.mu.Lock()
	p.code, p.msg, p.ok = *msg.Error.Code, msg.Error.Message, true
	p.mu.Unlock()
}
