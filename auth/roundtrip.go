package auth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Limits of the retries of one request.
const (
	// MaxAuthorizations bounds the authorizations (or renewals) one
	// request may cause: the first and at most two step-ups.
	MaxAuthorizations = 3
)

// Wrap returns a RoundTripper that sends the access token, as
// "Authorization: Bearer", only on requests to the server URL's origin
// (any other request passes through untouched), and that answers a 401 or
// a 403 insufficient_scope by renewing the token (Renew) and sending that
// request again: once after a 401, and at most MaxAuthorizations renewals
// in all; a 403 for scopes already granted is not retried.
func (a *Authorizer) Wrap(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &authTransport{a: a, base: base}
}

type authTransport struct {
	a    *Authorizer
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ru, err := t.a.resourceURL()
	if err != nil || !sameOrigin(req.URL, ru) {
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	body, err := replayable(req)
	if err != nil {
		return nil, err
	}
	tok, err := t.a.Current(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := t.send(req, body, tok)
	after401 := false
	for renewals := 0; ; renewals++ {
		if err != nil {
			return nil, err
		}
		ch := ParseChallenge(resp.StatusCode, resp.Header)
		switch {
		case resp.StatusCode == http.StatusUnauthorized && !after401:
			after401 = true
		case ch.InsufficientScope() && scopesGranted(t.a.Granted(), ch.Scope) && tok != "":
			drain(resp)
			return nil, t.a.fail(fmt.Errorf("the server refuses the request for want of scope %q, which was already granted", ch.Scope))
		case ch.InsufficientScope():
		default:
			return resp, nil
		}
		if renewals >= MaxAuthorizations {
			drain(resp)
			return nil, t.a.fail(fmt.Errorf("the server still refuses after %d authorizations (HTTP %d)", renewals, resp.StatusCode))
		}
		drain(resp)
		if tok, err = t.a.Renew(ctx, ch, tok); err != nil {
			return nil, err
		}
		resp, err = t.send(req, body, tok)
	}
}

// send sends a copy of req with the token (or none).
func (t *authTransport) send(req *http.Request, body []byte, tok string) (*http.Response, error) {
	r := req.Clone(req.Context())
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return t.base.RoundTrip(r)
}

// replayable reads the request body so it can be sent again (MCP request
// bodies are small JSON-RPC messages).
func replayable(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, errors.New("cannot read the request body")
	}
	return b, nil
}

// drain discards and closes a response body so its connection is reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
