package config

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Server is one effective server entry.
type Server struct {
	Name string `json:"name,omitempty"`

	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Socket  string            `json:"socket,omitempty"`

	// Lifecycle is lazy (default), eager, keep-alive or lazy-keep-alive.
	Lifecycle string `json:"lifecycle,omitempty"`
	// IdleTimeout is in minutes; nil means "not set here".
	IdleTimeout *float64 `json:"idleTimeout,omitempty"`
	// RequestTimeoutMs bounds a call (its synonym timeout is folded in).
	RequestTimeoutMs *int64 `json:"requestTimeoutMs,omitempty"`
	StartupTimeoutMs *int64 `json:"startupTimeoutMs,omitempty"`
	CatalogTimeoutMs *int64 `json:"catalogTimeoutMs,omitempty"`
	ProtocolVersion  string `json:"protocolVersion,omitempty"`
	Debug            bool   `json:"debug,omitempty"`
	Disabled         bool   `json:"disabled,omitempty"`
	Description      string `json:"description,omitempty"`

	// Source is the file the entry came from ("" for in-memory config).
	Source string `json:"source,omitempty"`
}

// Settings are the file-wide defaults.
type Settings struct {
	// IdleTimeout in minutes for servers that do not set their own.
	IdleTimeout *float64 `json:"idleTimeout,omitempty"`
	// RequestTimeoutMs for servers that do not set their own.
	RequestTimeoutMs *int64 `json:"requestTimeoutMs,omitempty"`
}

// Endpoint returns the server's transport fields.
func (s Server) Endpoint() messages.Endpoint {
	return messages.Endpoint{
		Command: s.Command, Args: append([]string(nil), s.Args...), Env: cloneMap(s.Env), Cwd: s.Cwd,
		URL: s.URL, Headers: cloneMap(s.Headers), Socket: s.Socket,
		ProtocolVersion: s.ProtocolVersion, Debug: s.Debug,
	}
}

// DefaultIdleMinutes is the idle timeout of lazy servers when neither the
// server nor settings set one.
const DefaultIdleMinutes = 10

// Idle returns the idle timeout that applies: the server's own, else (except
// for eager servers, which are idle-closed only when they set it themselves)
// settings', else 10 minutes. Zero means never.
func (s Server) Idle(set Settings) time.Duration {
	switch {
	case s.IdleTimeout != nil:
		return minutes(*s.IdleTimeout)
	case s.Lifecycle == "eager":
		return 0
	case set.IdleTimeout != nil:
		return minutes(*set.IdleTimeout)
	}
	return DefaultIdleMinutes * time.Minute
}

// CallTimeout returns the call deadline that applies (0: the default).
func (s Server) CallTimeout(set Settings) time.Duration {
	switch {
	case s.RequestTimeoutMs != nil && *s.RequestTimeoutMs > 0:
		return time.Duration(*s.RequestTimeoutMs) * time.Millisecond
	case set.RequestTimeoutMs != nil && *set.RequestTimeoutMs > 0:
		return time.Duration(*set.RequestTimeoutMs) * time.Millisecond
	}
	return 0
}

// StartupTimeout returns the startup deadline (0: the default).
func (s Server) StartupTimeout() time.Duration { return millis(s.StartupTimeoutMs) }

// CatalogTimeout returns the catalog deadline (0: the default).
func (s Server) CatalogTimeout() time.Duration { return millis(s.CatalogTimeoutMs) }

func millis(v *int64) time.Duration {
	if v == nil || *v <= 0 {
		return 0
	}
	return time.Duration(*v) * time.Millisecond
}

func minutes(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
