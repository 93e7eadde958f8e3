package transports

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects bounds the redirects one HTTP request follows.
const maxRedirects = 5

// Redirect policy for every MCP request (Streamable HTTP, the legacy SSE
// GET stream and the POST endpoint it announces): a redirect is followed
// only within the request's origin (scheme, host and port), at most
// maxRedirects times, and never with a Referer. A redirect to another
// origin would carry the configured headers, the URL's query and, for the
// same host on another port, the bearer token and cookies to a place the
// user never named, and continue the MCP session there: it fails the
// request instead, with an error naming both hosts (never a path, a query
// or a header value).

// errTooManyRedirects reports a request redirected more than maxRedirects
// times.
var errTooManyRedirects = fmt.Errorf("transports: more than %d redirects", maxRedirects)

// crossOriginError reports a redirect, or a legacy SSE endpoint, on another
// origin. from and to are scheme://host:port only.
type crossOriginError struct {
	what     string // "redirected" or "announced its message endpoint"
	from, to string
}

func (e *crossOriginError) Error() string {
	return fmt.Sprintf("the server %s to another origin (%s → %s); mcprt follows only the same origin", e.what, e.from, e.to)
}

// checkRedirect is the http.Client's redirect policy.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	if from, to := origin(via[0].URL), origin(req.URL); from != to {
		return &crossOriginError{what: "redirected", from: from, to: to}
	}
	req.Header.Del("Referer")
	return nil
}

// origin renders a URL's origin, with the scheme's default port made
// explicit so that http://h and http://h:80 are one origin.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

var endpointEvent = []byte("event: endpoint")

// checkEndpoint inspects one legacy SSE event: an endpoint event whose URL
// (resolved against the stream's URL) is on another origin fails the
// connection at once, instead of the client ignoring it and the handshake
// waiting for ever.
func checkEndpoint(ev []byte, base *url.URL) error {
	if base == nil || !bytes.Contains(ev, endpointEvent) {
		return nil
	}
	isEndpoint := false
	var data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if v, ok := bytes.CutPrefix(line, []byte("event:")); ok {
			isEndpoint = string(bytes.TrimSpace(v)) == "endpoint"
		}
		if v, ok := bytes.CutPrefix(line, dataField); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
	}
	if !isEndpoint {
		return nil
	}
	u, err := base.Parse(string(data))
	if err != nil {
		return errors.New("transports: the server announced a message endpoint that is not a URL")
	}
	if from, to := origin(base), origin(u); from != to {
		return &crossOriginError{what: "announced its message endpoint", from: from, to: to}
	}
	return nil
}
