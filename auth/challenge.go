package auth

import (
	"net/http"
	"strings"
)

// Challenge is what a 401 or 403 response asks for: the Bearer
// auth-params of its WWW-Authenticate header.
type Challenge struct {
	// Status is the HTTP status (401 or 403).
	Status int
	// ResourceMetadata is the resource_metadata URL (RFC 9728 §5.1), if any.
	ResourceMetadata string
	// Scope is the scope the server asks for, space-separated, if any.
	Scope string
	// Error is the OAuth error code (invalid_token, insufficient_scope, ...).
	Error string
}

// InsufficientScope reports whether the challenge is a step-up request.
func (c Challenge) InsufficientScope() bool {
	return c.Status == http.StatusForbidden && c.Error == "insufficient_scope"
}

// ParseChallenge reads the Bearer challenge of a response's WWW-Authenticate
// headers. A header without a Bearer challenge gives an empty Challenge
// with only Status set.
func ParseChallenge(status int, h http.Header) Challenge {
	c := Challenge{Status: status}
	for _, v := range h.Values("WWW-Authenticate") {
		params, ok := bearerParams(v)
		if !ok {
			continue
		}
		c.ResourceMetadata = params["resource_metadata"]
		c.Scope = params["scope"]
		c.Error = params["error"]
		return c
	}
	return c
}

// bearerParams finds the Bearer challenge in one header value (which may
// hold several challenges) and returns its auth-params, names lowercased.
func bearerParams(v string) (map[string]string, bool) {
	s := v
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return nil, false
		}
		scheme, rest := cutToken(s)
		if !strings.EqualFold(scheme, "Bearer") {
			// Skip this challenge's params: up to the next token followed
			// by a space that is not a param (name=).
			s = skipChallenge(rest)
			continue
		}
		return parseParams(rest), true
	}
}

// cutToken splits a leading token (up to space, comma or '=') off s.
func cutToken(s string) (string, string) {
	i := strings.IndexAny(s, " \t,=")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// parseParams reads name=value pairs (values quoted or tokens) until the
// next challenge begins.
func parseParams(s string) map[string]string {
	out := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return out
		}
		name, rest := cutToken(s)
		rest = strings.TrimLeft(rest, " \t")
		if name == "" || !strings.HasPrefix(rest, "=") {
			return out // the next challenge's scheme
		}
		rest = strings.TrimLeft(rest[1:], " \t")
		var val string
		val, s = readValue(rest)
		out[strings.ToLower(name)] = val
	}
}

// readValue reads a quoted-string (with backslash escapes) or a token.
func readValue(s string) (string, string) {
	if !strings.HasPrefix(s, `"`) {
		i := strings.IndexAny(s, " \t,")
		if i < 0 {
			return s, ""
		}
		return s[:i], s[i:]
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:]
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}

// skipChallenge skips the auth-params of a challenge that is not Bearer.
func skipChallenge(s string) string {
	for {
		s = strings.TrimLeft(s, " \t,")
		name, rest := cutToken(s)
		r := strings.TrimLeft(rest, " \t")
		if name == "" || !strings.HasPrefix(r, "=") {
			return s
		}
		_, s = readValue(strings.TrimLeft(r[1:], " \t"))
	}
}
