package auth

import (
	"context"
	"net/http"
	"strings"
)

// probeBody is an initialize request, sent without a token to learn the
// server's challenge.
const probeBody = `{"jsonrpc":"2.0","id":"mcprt-auth-probe","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcprt","version":"auth-probe"}}}`

// Probe sends the server an unauthenticated initialize and returns the
// challenge of its 401 or 403 (an empty Challenge otherwise, or when the
// server cannot be reached: discovery then uses the well-known URLs).
func (a *Authorizer) Probe(ctx context.Context) Challenge {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, strings.NewReader(probeBody))
	if err != nil {
		return Challenge{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := a.httpClient().Do(req)
	if err != nil {
		return Challenge{}
	}
	drain(resp)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return ParseChallenge(resp.StatusCode, resp.Header)
	}
	return Challenge{}
}
