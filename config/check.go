package config

import (
	"fmt"
	"strings"
)

// checkEntry applies the rules that need the whole (merged) entry. source
// names the file the diagnostics point at (the highest file that declared
// the server); merged says whether several files contributed.
func checkEntry(s *Server, source string, merged bool) []Issue {
	var issues []Issue
	fail := func(field, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if merged {
			msg += " (after merging every file that declares this server)"
		}
		issues = append(issues, Issue{File: source, Server: s.Name, Field: field, Message: msg})
	}
	set := 0
	for _, v := range []string{s.Command, s.URL, s.Socket} {
		if v != "" {
			set++
		}
	}
	if set != 1 {
		fail("", "exactly one of command, url and socket must be set")
	}
	switch s.Type {
	case "stdio":
		if s.Command == "" {
			fail("type", "is stdio but no command is set")
		}
	case "http", "streamable-http", "sse":
		if s.URL == "" {
			fail("type", "is %s but no url is set", s.Type)
		}
	}
	if len(s.Headers) > 0 && s.URL == "" {
		fail("headers", "only apply to url servers")
	}
	if (s.Auth != "" || s.BearerToken != "" || s.BearerTokenEnv != "" || s.OAuth != nil) && s.URL == "" {
		fail("", "auth, bearerToken, bearerTokenEnv and oauth only apply to url servers")
	}
	hasToken := s.BearerToken != "" || s.BearerTokenEnv != ""
	switch {
	case s.Auth == "bearer" && !hasToken:
		fail("auth", "is bearer but neither bearerToken nor bearerTokenEnv is set")
	case s.Auth == "oauth" && hasToken:
		fail("auth", "is oauth but a bearer token is set too; use one of them")
	case s.OAuth != nil && hasToken:
		fail("oauth", "and a bearer token are both set; use one of them")
	}
	if hasToken {
		for k := range s.Headers {
			if strings.EqualFold(k, "Authorization") {
				fail("headers", "set Authorization and a bearer token is set too; use one of them")
			}
		}
	}
	if (len(s.Env) > 0 || s.Cwd != "" || len(s.Args) > 0) && s.Command == "" {
		fail("", "args, env and cwd only apply to command servers")
	}
	return issues
}
