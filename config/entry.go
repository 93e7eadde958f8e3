package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"

	"github.com/mcprt/mcprt/messages"
)

// knownFields are the server fields this version understands.
var knownFields = map[string]bool{
	"command": true, "args": true, "env": true, "cwd": true, "url": true, "headers": true, "socket": true,
	"lifecycle": true, "idleTimeout": true, "requestTimeoutMs": true, "timeout": true,
	"startupTimeoutMs": true, "catalogTimeoutMs": true, "protocolVersion": true,
	"debug": true, "disabled": true, "description": true, "type": true,
	"auth": true, "bearerToken": true, "bearerTokenEnv": true, "oauth": true,
	"directTools": true, "toolPrefix": true, "includeTools": true, "excludeTools": true,
	"exposeResources": true, "searchKeywords": true,
}

// entryParser decodes one server entry field by field, collecting issues
// that name the field and never the value.
type entryParser struct {
	source, name string
	fields       map[string]json.RawMessage
	issues       []Issue
}

func (p *entryParser) fail(field, format string, args ...any) {
	p.issues = append(p.issues, Issue{File: p.source, Server: p.name, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (p *entryParser) str(field string, dst *string) {
	if raw, ok := p.fields[field]; ok && json.Unmarshal(raw, dst) != nil {
		p.fail(field, "must be a string")
	}
}

func (p *entryParser) strs(field string, dst *[]string) {
	if raw, ok := p.fields[field]; ok && json.Unmarshal(raw, dst) != nil {
		p.fail(field, "must be an array of strings")
	}
}

func (p *entryParser) strMap(field string, dst *map[string]string) {
	if raw, ok := p.fields[field]; ok && json.Unmarshal(raw, dst) != nil {
		p.fail(field, "must be an object whose values are strings")
	}
}

func (p *entryParser) boolean(field string, dst *bool) {
	if raw, ok := p.fields[field]; ok && json.Unmarshal(raw, dst) != nil {
		p.fail(field, "must be true or false")
	}
}

// millis reads a deadline: an integer number of milliseconds from 1 to
// 2,147,483,647.
func (p *entryParser) millis(field string) *int64 {
	raw, ok := p.fields[field]
	if !ok {
		return nil
	}
	var v int64
	if json.Unmarshal(raw, &v) != nil || v < 1 || v > 2147483647 {
		p.fail(field, "must be an integer number of milliseconds from 1 to 2147483647")
		return nil
	}
	return &v
}

func parseEntry(raw json.RawMessage, source, name string) (Server, []Issue) {
	p := &entryParser{source: source, name: name}
	if err := json.Unmarshal(raw, &p.fields); err != nil || p.fields == nil {
		p.fail("", "entry must be a JSON object")
		return Server{}, p.issues
	}
	var unknown []string
	for k := range p.fields {
		if !knownFields[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		p.fail(k, "unknown field; the entry is not used (check its spelling)")
	}
	s := Server{Name: name, Source: source}
	var typ string
	p.str("command", &s.Command)
	p.strs("args", &s.Args)
	p.strMap("env", &s.Env)
	p.str("cwd", &s.Cwd)
	p.str("url", &s.URL)
	p.strMap("headers", &s.Headers)
	p.str("socket", &s.Socket)
	p.str("lifecycle", &s.Lifecycle)
	p.str("protocolVersion", &s.ProtocolVersion)
	p.str("description", &s.Description)
	p.str("type", &typ)
	s.Type = typ
	p.str("auth", &s.Auth)
	p.str("bearerToken", &s.BearerToken)
	p.str("bearerTokenEnv", &s.BearerTokenEnv)
	p.str("toolPrefix", &s.ToolPrefix)
	p.strs("includeTools", &s.IncludeTools)
	p.strs("excludeTools", &s.ExcludeTools)
	p.strs("searchKeywords", &s.SearchKeywords)
	if raw, ok := p.fields["exposeResources"]; ok {
		var v bool
		if json.Unmarshal(raw, &v) != nil {
			p.fail("exposeResources", "must be true or false")
		}
		s.ExposeResources = &v
	}
	if raw, ok := p.fields["directTools"]; ok {
		var d DirectTools
		if d.UnmarshalJSON(raw) != nil {
			p.fail("directTools", "must be true, false or a list of tool names")
		}
		s.DirectTools = &d
	}
	if raw, ok := p.fields["oauth"]; ok {
		var o OAuth
		if strictDecode(raw, &o) != nil {
			p.fail("oauth", "must be an object with grantType, clientId, clientSecret, scope, redirectUri, clientName and clientUri strings")
		}
		s.OAuth = &o
	}
	p.boolean("debug", &s.Debug)
	if raw, ok := p.fields["disabled"]; ok {
		var v bool
		if json.Unmarshal(raw, &v) != nil {
			p.fail("disabled", "must be true or false")
		}
		s.Disabled = v
	}
	if raw, ok := p.fields["idleTimeout"]; ok {
		var v float64
		if json.Unmarshal(raw, &v) != nil || v < 0 {
			p.fail("idleTimeout", "must be a number of minutes, 0 or more (0 = never)")
		} else {
			s.IdleTimeout = &v
		}
	}
	s.RequestTimeoutMs = p.millis("requestTimeoutMs")
	if t := p.millis("timeout"); t != nil {
		if s.RequestTimeoutMs != nil {
			p.fail("timeout", "is a synonym of requestTimeoutMs; set only one of them")
		}
		s.RequestTimeoutMs = t
	}
	s.StartupTimeoutMs = p.millis("startupTimeoutMs")
	s.CatalogTimeoutMs = p.millis("catalogTimeoutMs")
	p.check(&s, typ)
	return s, p.issues
}

// check applies the rules that involve several fields.
func (p *entryParser) check(s *Server, typ string) {
	set := 0
	for _, v := range []string{s.Command, s.URL, s.Socket} {
		if v != "" {
			set++
		}
	}
	if set != 1 {
		p.fail("", "exactly one of command, url and socket must be set")
	}
	switch typ {
	case "", "stdio", "http", "streamable-http", "sse":
		if typ == "stdio" && s.Command == "" {
			p.fail("type", "is stdio but no command is set")
		}
		if (typ == "http" || typ == "streamable-http" || typ == "sse") && s.URL == "" {
			p.fail("type", "is %s but no url is set", typ)
		}
	default:
		p.fail("type", "must be stdio, http, streamable-http or sse")
	}
	switch s.Lifecycle {
	case "", "lazy", "eager", "keep-alive", "lazy-keep-alive":
	default:
		p.fail("lifecycle", "must be lazy, eager, keep-alive or lazy-keep-alive")
	}
	switch s.ProtocolVersion {
	case "", messages.ProtocolAuto, messages.Protocol20251125, messages.Protocol20260728:
	default:
		p.fail("protocolVersion", "must be auto, 2025-11-25 or 2026-07-28")
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
			p.fail("url", "must be an absolute http or https URL")
		case u.User != nil:
			p.fail("url", "must not contain credentials; put them in headers")
		}
	}
	if len(s.Headers) > 0 && s.URL == "" {
		p.fail("headers", "only apply to url servers")
	}
	switch s.Auth {
	case "", "bearer", "oauth":
	default:
		p.fail("auth", "must be bearer or oauth")
	}
	if (s.Auth != "" || s.BearerToken != "" || s.BearerTokenEnv != "" || s.OAuth != nil) && s.URL == "" {
		p.fail("", "auth, bearerToken, bearerTokenEnv and oauth only apply to url servers")
	}
	if s.OAuth != nil {
		switch s.OAuth.GrantType {
		case "", "authorization_code", "client_credentials":
		default:
			p.fail("oauth.grantType", "must be authorization_code or client_credentials")
		}
	}
	switch s.ToolPrefix {
	case "", "server", "short", "none", "mcp":
	default:
		p.fail("toolPrefix", "must be server, short, none or mcp")
	}
	if (len(s.Env) > 0 || s.Cwd != "" || len(s.Args) > 0) && s.Command == "" {
		p.fail("", "args, env and cwd only apply to command servers")
	}
}
