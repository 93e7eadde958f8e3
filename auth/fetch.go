package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// MaxMetadata caps a metadata document or a registration response.
const MaxMetadata = 256 << 10

// errNotFound marks a well-known URL that has no document (404 or 405):
// discovery moves on to the next candidate.
var errNotFound = errors.New("no document")

// fetchJSON GETs u and decodes the JSON object it returns into v. A 404
// (or another 4xx) is errNotFound; anything else that is not a 200 JSON
// object under MaxMetadata is an error naming the URL.
func fetchJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("bad metadata URL %s", redactURL(u))
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", redactURL(u), cleanErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxMetadata))
		return errNotFound
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered HTTP %d", redactURL(u), resp.StatusCode)
	}
	return decodeCapped(resp.Body, u, v)
}

// decodeCapped decodes one JSON object of at most MaxMetadata bytes.
func decodeCapped(r io.Reader, u string, v any) error {
	body, err := io.ReadAll(io.LimitReader(r, MaxMetadata+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", redactURL(u), cleanErr(err))
	}
	if len(body) > MaxMetadata {
		return fmt.Errorf("%s is larger than %d bytes", redactURL(u), MaxMetadata)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s is not a valid JSON metadata object", redactURL(u))
	}
	return nil
}

// redactURL drops the query, fragment and userinfo of u for messages.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	p.RawQuery, p.Fragment, p.User = "", "", nil
	return p.String()
}

// cleanErr strips a *url.Error's URL (which may carry a query) from err.
func cleanErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkEndpoint accepts an absolute https URL, or http on a loopback host.
func checkEndpoint(field, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("%s is not an absolute URL", field)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return nil, fmt.Errorf("%s %s is not https (plain http is only allowed on loopback)", field, redactURL(raw))
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s carries user information", field)
	}
	return u, nil
}

// origin returns scheme://host[:port] of u.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// sameOrigin compares two URLs' origins.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// authHTTPClient is the client for authorization traffic: it follows up to
// five redirects, each to an https URL or a loopback http one
// (authorization servers live on other origins by design), and never
// carries the resource's bearer token.
func authHTTPClient(base http.RoundTripper) *http.Client {
	return &http.Client{Transport: base, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if _, err := checkEndpoint("redirect", req.URL.String()); err != nil {
			return err
		}
		return nil
	}}
}
