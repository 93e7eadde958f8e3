package messages

import (
	"fmt"
	"log/slog"
	"sort"
)

// TransportKind names how a server is reached.
type TransportKind int

const (
	// TransportStdio spawns Command as a child process and speaks
	// newline-delimited JSON-RPC on its stdin and stdout.
	TransportStdio TransportKind = iota + 1
	// TransportHTTP posts to URL (Streamable HTTP), falling back to the
	// legacy HTTP+SSE transport when the endpoint refuses POST with 404,
	// 405 or 406.
	TransportHTTP
	// TransportSSE is the legacy HTTP+SSE transport. Configuration never asks
	// for it; a TransportHTTP connection reports it after falling back.
	TransportSSE
	// TransportSocket dials the Unix-domain socket Socket and speaks
	// newline-delimited JSON-RPC on it (as rmcp-mux serves it).
	TransportSocket
)

// String returns the transport's short name as status output shows it.
func (k TransportKind) String() string {
	switch k {
	case TransportStdio:
		return "stdio"
	case TransportHTTP:
		return "streamable-http"
	case TransportSSE:
		return "sse"
	case TransportSocket:
		return "socket"
	}
	return "unknown"
}

// Protocol versions a server's handshake may be pinned to.
const (
	// ProtocolAuto sends initialize with 2025-11-25 first and falls back to
	// server/discover (2026-07-28) only when the server refuses it.
	ProtocolAuto = "auto"
	// Protocol20251125 is the initialize handshake of 2025-11-25.
	Protocol20251125 = "2025-11-25"
	// Protocol20260728 is the stateless server/discover protocol.
	Protocol20260728 = "2026-07-28"
)

// Endpoint is everything needed to open one server's connection: the
// resolved, validated transport fields of its configuration. config produces
// it; transports consume it. It holds credentials, so its printing methods
// redact every value.
type Endpoint struct {
	// Command, Args, Env and Cwd describe a stdio server. Env is added to a
	// minimal inherited environment (PATH, HOME, USER, LANG, TMPDIR, ...),
	// never to the host's whole environment.
	//
	// Values of Env and Headers, and BearerToken, may be secret references:
	// a value starting with a single "!" is a command whose output is the
	// value, run only when the connection opens; a value starting with "!!"
	// is the literal value without its first "!". Any other value is
	// literal.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// URL and Headers describe an HTTP server.
	URL     string
	Headers map[string]string
	// BearerToken, when set, is sent as "Authorization: Bearer <token>" by
	// an HTTP server's connection.
	BearerToken string
	// Socket is the path of a Unix-domain socket.
	Socket string
	// Problem, when set, is why the endpoint cannot be used (an environment
	// variable it needs is not set, say); dialing fails with it before any
	// I/O. It never contains a configuration value.
	Problem string
	// ProtocolVersion is ProtocolAuto (the default when empty),
	// Protocol20251125 or Protocol20260728.
	ProtocolVersion string
	// Debug keeps the server's stderr visible in diagnostics.
	Debug bool
	// LogLevel, when set, is sent with logging/setLevel after the
	// handshake when the server offers logging.
	LogLevel string
}

// Kind returns the transport the endpoint asks for (0 when none of Command,
// URL and Socket is set).
func (e Endpoint) Kind() TransportKind {
	switch {
	case e.Command != "":
		return TransportStdio
	case e.URL != "":
		return TransportHTTP
	case e.Socket != "":
		return TransportSocket
	}
	return 0
}

// SortedEnv returns Env as KEY=VALUE pairs in key order, so the child's
// environment does not depend on map iteration order.
func (e Endpoint) SortedEnv() []string {
	keys := make([]string, 0, len(e.Env))
	for k := range e.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+e.Env[k])
	}
	return out
}

// String describes the endpoint by transport and field names only.
func (e Endpoint) String() string {
	return fmt.Sprintf("Endpoint{%s, %d args, %d env, %d headers, protocol %s}",
		e.Kind(), len(e.Args), len(e.Env), len(e.Headers), e.protocol())
}

// GoString redacts like String, so %#v cannot leak a value either.
func (e Endpoint) GoString() string { return e.String() }

// LogValue redacts like String for log/slog.
func (e Endpoint) LogValue() slog.Value { return slog.StringValue(e.String()) }

func (e Endpoint) protocol() string {
	if e.ProtocolVersion == "" {
		return ProtocolAuto
	}
	return e.ProtocolVersion
}
