package config

import (
	"path/filepath"
	"strings"

	"github.com/mcprt/mcprt/messages"
)

// resolver turns a server's written values into the endpoint the
// transports open: variables interpolated, "~" and relative paths
// resolved, secret references encoded (see messages.Endpoint). It runs no
// command: a "!command" stays a reference.
type resolver struct {
	lookup  func(string) (string, bool)
	home    string
	workDir string // base of relative paths of in-memory configuration
	issues  []Issue
	problem string
	s       *Server
}

func (r *resolver) fail(field, msg string) {
	r.issues = append(r.issues, Issue{File: r.s.Provenance[field], Server: r.s.Name, Field: field, Message: msg})
	if r.problem == "" {
		r.problem = "field " + field + ": " + msg
	}
}

// text interpolates a non-secret value.
func (r *resolver) text(field, v string) string {
	out, missing, err := expand(v, r.lookup)
	switch {
	case err != nil:
		r.fail(field, err.Error())
	case missing:
		r.fail(field, "uses an environment variable that is not set (and has no default); the server cannot connect")
	}
	return out
}

// secret resolves a secret-capable value into the encoded form of
// messages.Endpoint.
func (r *resolver) secret(field, v string) string {
	switch {
	case strings.HasPrefix(v, "!!"):
		return escapeBang("!" + r.text(field, v[2:])) // the literal keeps one "!"
	case strings.HasPrefix(v, "!"):
		return v // a command, run when the connection opens
	}
	return escapeBang(r.text(field, v))
}

// escapeBang keeps a literal value that happens to start with "!" from
// being taken for a command.
func escapeBang(v string) string {
	if strings.HasPrefix(v, "!") {
		return "!" + v
	}
	return v
}

// path interpolates a path and resolves "~" and relative paths (from the
// directory of the file that set the field).
func (r *resolver) path(field, v string) string {
	p := r.text(field, v)
	if p == "" {
		return ""
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if r.home == "" {
			r.fail(field, "starts with ~ but the home directory is unknown")
			return ""
		}
		p = filepath.Join(r.home, p[1:])
	}
	if !filepath.IsAbs(p) {
		base := r.workDir
		if src := r.s.Provenance[field]; src != "" {
			base = filepath.Dir(src)
		}
		p = filepath.Join(base, p)
	}
	return p
}

// resolve builds s's endpoint. Problems (a missing variable, a URL that is
// not usable once interpolated) are returned as issues and recorded in the
// endpoint, so that connecting fails before any request is sent.
func resolve(s *Server, lookup func(string) (string, bool), home, workDir string) (messages.Endpoint, []Issue) {
	r := &resolver{lookup: lookup, home: home, workDir: workDir, s: s}
	if r.lookup == nil {
		r.lookup = func(string) (string, bool) { return "", false }
	}
	ep := messages.Endpoint{ProtocolVersion: s.ProtocolVersion, Debug: s.Debug, LogLevel: s.LogLevel}
	if s.Command != "" {
		ep.Command = r.text("command", s.Command)
		if ep.Command == "" && r.problem == "" {
			r.fail("command", "is empty once interpolated")
		}
	}
	for _, a := range s.Args {
		ep.Args = append(ep.Args, r.text("args", a))
	}
	if s.Env != nil {
		ep.Env = make(map[string]string, len(s.Env))
		for k, v := range s.Env {
			ep.Env[k] = r.secret("env", v)
		}
	}
	if s.Cwd != "" {
		ep.Cwd = r.path("cwd", s.Cwd)
	}
	if s.URL != "" {
		before := r.problem
		ep.URL = r.text("url", s.URL)
		if r.problem == before {
			if msg := urlProblem(ep.URL); msg != "" {
				r.fail("url", "once interpolated, "+msg)
			}
		}
	}
	if s.Headers != nil {
		ep.Headers = make(map[string]string, len(s.Headers))
		for k, v := range s.Headers {
			val := r.secret("headers", v)
			if !strings.HasPrefix(val, "!") || strings.HasPrefix(val, "!!") {
				if strings.ContainsAny(val, "\r\n\x00") {
					r.fail("headers", "a header value contains a line break or NUL byte once interpolated")
				}
			}
			ep.Headers[k] = val
		}
	}
	if s.Socket != "" {
		ep.Socket = r.path("socket", s.Socket)
	}
	switch {
	case s.BearerToken != "":
		ep.BearerToken = r.secret("bearerToken", s.BearerToken)
	case s.BearerTokenEnv != "":
		v, ok := r.lookup(s.BearerTokenEnv)
		if !ok || v == "" {
			r.fail("bearerTokenEnv", "names an environment variable that is not set or is empty; the server cannot connect")
		}
		ep.BearerToken = escapeBang(v)
	}
	ep.Problem = r.problem
	return ep, r.issues
}
