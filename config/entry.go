package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
)

// knownFields are the server fields this version understands.
var knownFields = map[string]bool{
	"command": true, "args": true, "env": true, "cwd": true, "url": true, "headers": true, "socket": true,
	"lifecycle": true, "idleTimeout": true, "requestTimeoutMs": true, "timeout": true,
	"startupTimeoutMs": true, "catalogTimeoutMs": true, "protocolVersion": true,
	"debug": true, "logLevel": true, "trace": true, "disabled": true, "description": true, "type": true,
	"auth": true, "bearerToken": true, "bearerTokenEnv": true, "oauth": true,
	"directTools": true, "toolPrefix": true, "includeTools": true, "excludeTools": true,
	"exposeResources": true, "searchKeywords": true,
}

// templated are the fields whose strings are interpolated.
var templated = map[string]bool{"command": true, "args": true, "env": true, "cwd": true, "url": true, "headers": true, "socket": true, "bearerToken": true}

// secretFields hold values that are never shown, and that may be a
// "!command" reference.
var secretFields = map[string]bool{"env": true, "headers": true, "bearerToken": true}

// entryParser decodes one server entry field by field, collecting issues
// that name the field and never the value.
type entryParser struct {
	source, name string
	fields       map[string]json.RawMessage
	issues       []Issue
	warnings     []Issue // problems that leave the entry valid
}

// warn records a problem with a field that does not invalidate the entry.
func (p *entryParser) warn(field, format string, args ...any) {
	p.warnings = append(p.warnings, Issue{File: p.source, Server: p.name, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (p *entryParser) fail(field, format string, args ...any) {
	p.issues = append(p.issues, Issue{File: p.source, Server: p.name, Field: field, Message: fmt.Sprintf(format, args...)})
}

// decode unmarshals a present field into dst; it reports whether the field
// was present and well-typed.
func (p *entryParser) decode(field string, dst any, msg string) bool {
	raw, ok := p.fields[field]
	if !ok {
		return false
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, dst) != nil {
		p.fail(field, "%s", msg)
		return false
	}
	return true
}

func (p *entryParser) str(field string, dst *string) bool {
	return p.decode(field, dst, "must be a string")
}

func (p *entryParser) strs(field string, dst *[]string) bool {
	return p.decode(field, dst, "must be an array of strings")
}

func (p *entryParser) strMap(field string, dst *map[string]string) bool {
	return p.decode(field, dst, "must be an object whose values are strings")
}

// millis reads a deadline: an integer number of milliseconds from 1 to
// 2,147,483,647.
func (p *entryParser) millis(field string) *int64 {
	raw, ok := p.fields[field]
	if !ok {
		return nil
	}
	v, whole := wholeNumber(raw)
	if !whole || v < 1 || v > 2147483647 {
		p.fail(field, "must be an integer number of milliseconds from 1 to 2147483647")
		return nil
	}
	return &v
}

// wholeNumber reads a JSON number without a fractional part: 1000, 1e3
// and 1000.0 alike, as JSON Schema's "integer" (docs/mcp.schema.json) and
// JavaScript hosts read them. null is not a number.
func wholeNumber(raw json.RawMessage) (int64, bool) {
	var f float64
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// template checks the interpolation syntax of a templated string.
func (p *entryParser) template(field, v string) {
	if err := checkTemplate(v); err != nil {
		p.fail(field, "%s", err.Error())
	}
}

// secret checks a secret-capable value: "!command" is kept as is, "!!"
// escapes a literal "!", anything else is a template.
func (p *entryParser) secret(field, v string) {
	switch {
	case strings.HasPrefix(v, "!!"):
		p.template(field, v[2:])
	case strings.HasPrefix(v, "!"):
		if strings.TrimSpace(v[1:]) == "" {
			p.fail(field, "a value starting with ! must be followed by a command (use !! for a literal !)")
		}
	default:
		p.template(field, v)
	}
}

// parseEntry decodes an entry's fields into a Server and checks each field
// on its own. The rules that involve the whole entry are in check.go.
func parseEntry(fields map[string]json.RawMessage, source, name string) (Server, []Issue) {
	p := &entryParser{source: source, name: name, fields: fields}
	var unknown []string
	for k := range fields {
		if !knownFields[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		p.fail(fieldLabel(k), "%s", unknownFieldMessage(k))
	}
	s := Server{Name: name, Source: source}
	if p.str("command", &s.Command) {
		p.template("command", s.Command)
		if s.Command == "" {
			p.fail("command", "must not be empty")
		}
	}
	if p.strs("args", &s.Args) {
		for _, a := range s.Args {
			p.template("args", a)
		}
	}
	if p.strMap("env", &s.Env) {
		for k, v := range s.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				p.fail("env", "a variable name is empty or contains '=' or a NUL byte")
			}
			p.secret("env", v)
		}
	}
	if p.str("cwd", &s.Cwd) {
		p.template("cwd", s.Cwd)
	}
	if p.str("url", &s.URL) {
		p.template("url", s.URL)
		p.checkURL("url", s.URL)
	}
	if p.strMap("headers", &s.Headers) {
		for k, v := range s.Headers {
			if !validHeaderName(k) {
				p.fail("headers", "a header name is not a valid HTTP header name")
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				p.fail("headers", "a header value contains a line break or NUL byte")
			}
			p.secret("headers", v)
		}
	}
	if p.str("socket", &s.Socket) {
		p.template("socket", s.Socket)
		if s.Socket == "" {
			p.fail("socket", "must not be empty")
		}
	}
	p.enum("lifecycle", &s.Lifecycle, "lazy", "eager", "keep-alive", "lazy-keep-alive")
	p.enum("protocolVersion", &s.ProtocolVersion, "auto", "2025-11-25", "2026-07-28")
	p.enum("type", &s.Type, "stdio", "http", "streamable-http", "sse")
	p.enum("auth", &s.Auth, "bearer", "oauth")
	p.enum("toolPrefix", &s.ToolPrefix, "server", "short", "none", "mcp")
	p.enum("logLevel", &s.LogLevel, "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
	p.str("description", &s.Description)
	if p.str("bearerToken", &s.BearerToken) {
		p.secret("bearerToken", s.BearerToken)
	}
	if p.str("bearerTokenEnv", &s.BearerTokenEnv) && !isIdent(s.BearerTokenEnv) {
		p.fail("bearerTokenEnv", "must be the name of an environment variable (letters, digits and '_')")
	}
	p.strs("includeTools", &s.IncludeTools)
	p.strs("excludeTools", &s.ExcludeTools)
	p.strs("searchKeywords", &s.SearchKeywords)
	var b bool
	if p.decode("exposeResources", &b, "must be true or false") {
		s.ExposeResources = &b
	}
	p.decode("debug", &s.Debug, "must be true or false")
	// Seed 002's fields never drop a server: trace is the host's to carry
	// out, and only a literal true disables.
	if raw, ok := fields["trace"]; ok && json.Unmarshal(raw, &s.Trace) != nil {
		p.warn("trace", "must be true or false; ignored")
	}
	if raw, ok := fields["disabled"]; ok && json.Unmarshal(raw, &s.Disabled) != nil {
		s.Disabled = false
		p.warn("disabled", "must be true or false; only a literal true disables, so the server stays enabled")
	}
	if raw, ok := fields["directTools"]; ok {
		var d DirectTools
		if d.UnmarshalJSON(raw) != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			p.fail("directTools", "must be true, false or a list of tool names")
		} else {
			s.DirectTools = &d
		}
	}
	p.oauth(&s)
	var idle float64
	if p.decode("idleTimeout", &idle, "must be a number of minutes, 0 or more (0 = never)") {
		if idle < 0 || idle > 1e6 {
			p.fail("idleTimeout", "must be a number of minutes from 0 (never) to 1000000")
		} else {
			s.IdleTimeout = &idle
		}
	}
	s.RequestTimeoutMs = p.requestMillis("requestTimeoutMs")
	if t := p.requestMillis("timeout"); t != nil {
		if _, both := fields["requestTimeoutMs"]; both {
			p.fail("timeout", "is a synonym of requestTimeoutMs; set only one of them")
		}
		s.RequestTimeoutMs = t
	}
	s.StartupTimeoutMs = p.millis("startupTimeoutMs")
	s.CatalogTimeoutMs = p.millis("catalogTimeoutMs")
	endpoints := 0
	for _, f := range []string{"command", "url", "socket"} {
		if _, ok := fields[f]; ok {
			endpoints++
		}
	}
	if endpoints > 1 {
		p.fail("", "command, url and socket are mutually exclusive; set exactly one of them")
	}
	_, hasToken := fields["bearerToken"]
	if _, hasEnv := fields["bearerTokenEnv"]; hasToken && hasEnv {
		p.fail("bearerTokenEnv", "set only one of bearerToken and bearerTokenEnv")
	}
	s.warnings = p.warnings
	return s, p.issues
}

// requestMillis reads requestTimeoutMs (or its synonym timeout): as seed 002
// says, 0 or less means the default, like leaving it out.
func (p *entryParser) requestMillis(field string) *int64 {
	if raw, ok := p.fields[field]; ok {
		if v, whole := wholeNumber(raw); whole && v <= 0 {
			return nil
		}
	}
	return p.millis(field)
}

// enum reads a string field that must be one of values.
func (p *entryParser) enum(field string, dst *string, values ...string) {
	if !p.str(field, dst) {
		return
	}
	for _, v := range values {
		if *dst == v {
			return
		}
	}
	p.fail(field, "must be %s", orList(values))
	*dst = ""
}

func orList(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// oauthFields are the members of oauth.
var oauthFields = []string{"grantType", "clientId", "clientSecret", "scope", "redirectUri", "clientName", "clientUri", "authorizationParams"}

// flowOwnedParams are the authorization URL's parameters the OAuth flow
// sets itself, which authorizationParams cannot override.
var flowOwnedParams = map[string]bool{"client_id": true, "redirect_uri": true, "scope": true, "state": true,
	"code_challenge": true, "code_challenge_method": true, "response_type": true, "resource": true}

func (p *entryParser) oauth(s *Server) {
	raw, ok := p.fields["oauth"]
	if !ok {
		return
	}
	members, err := objectMembers(raw, 0)
	if err != nil {
		p.fail("oauth", "must be an object with %s strings", orList(oauthFields))
		return
	}
	sub := &entryParser{source: p.source, name: p.name, fields: map[string]json.RawMessage{}}
	for _, m := range members {
		known := false
		for _, f := range oauthFields {
			known = known || f == m.key
		}
		if !known {
			p.fail("oauth."+fieldLabel(m.key), "unknown field; the oauth object takes %s", orList(oauthFields))
			continue
		}
		sub.fields[m.key] = m.value
	}
	o := &OAuth{}
	sub.enum("grantType", &o.GrantType, "authorization_code", "client_credentials")
	for f, dst := range map[string]*string{"clientId": &o.ClientID, "clientSecret": &o.ClientSecret, "scope": &o.Scope,
		"redirectUri": &o.RedirectURI, "clientName": &o.ClientName, "clientUri": &o.ClientURI} {
		sub.str(f, dst)
	}
	if raw, ok := sub.fields["authorizationParams"]; ok {
		var params map[string]string
		if json.Unmarshal(raw, &params) != nil || params == nil {
			p.warn("oauth.authorizationParams", "must be an object whose values are strings; ignored")
		}
		for k := range params {
			if flowOwnedParams[k] || k == "" {
				p.warn("oauth.authorizationParams", "sets a parameter the OAuth flow owns (client_id, redirect_uri, scope, state, code_challenge, response_type, resource); that one is ignored")
				delete(params, k)
			}
		}
		if len(params) > 0 {
			o.AuthorizationParams = params
		}
	}
	if strings.HasPrefix(o.ClientSecret, "!") && !strings.HasPrefix(o.ClientSecret, "!!") && strings.TrimSpace(o.ClientSecret[1:]) == "" {
		sub.fail("clientSecret", "a value starting with ! must be followed by a command (use !! for a literal !)")
	}
	if o.RedirectURI != "" {
		u, err := url.Parse(o.RedirectURI)
		if err != nil || u.Scheme != "http" || (u.Hostname() != "localhost" && u.Hostname() != "127.0.0.1" && u.Hostname() != "::1") || u.User != nil {
			sub.fail("redirectUri", "must be an http://localhost (or 127.0.0.1) URL, with its port and path")
		}
	}
	if o.ClientURI != "" {
		if u, err := url.Parse(o.ClientURI); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
			sub.fail("clientUri", "must be an absolute http or https URL without credentials")
		}
	}
	for _, is := range sub.issues {
		is.Field = "oauth." + is.Field
		p.issues = append(p.issues, is)
	}
	s.OAuth = o
}

// checkURL checks what can be checked of a URL before its variables are
// known: with every variable standing in as a plain word, it must be an
// absolute http or https URL without credentials or a fragment.
func (p *entryParser) checkURL(field, raw string) {
	if checkTemplate(raw) != nil {
		return
	}
	if msg := urlProblem(placeholder(raw)); msg != "" {
		p.fail(field, "%s", msg)
	}
}

// urlProblem says what is wrong with a URL for an HTTP server, or "".
func urlProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return "must be an absolute http or https URL"
	case u.User != nil:
		return "must not contain credentials (user:password@); put them in headers or bearerToken"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not contain a fragment (#...)"
	}
	return ""
}

// validHeaderName reports whether k is an HTTP token (RFC 9110).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}
