package config

import (
	"encoding/json"
	"errors"
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
	// LogLevel, when set, is sent with logging/setLevel after every
	// handshake with a server that offers logging; its log messages reach
	// the host's logger.
	LogLevel string `json:"logLevel,omitempty"`
	// Trace asks for metadata-only protocol tracing of this server (seed
	// 002's per-server trace; docs/tracing.md).
	Trace       bool   `json:"trace,omitempty"`
	Disabled    bool   `json:"disabled,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is the transport other hosts write: stdio, http,
	// streamable-http or sse (legacy SSE is reached through the url's
	// fallback either way).
	Type string `json:"type,omitempty"`

	// Auth is bearer or oauth (url servers only).
	Auth string `json:"auth,omitempty"`
	// BearerToken is a token sent as "Authorization: Bearer"; a secret.
	BearerToken string `json:"bearerToken,omitempty"`
	// BearerTokenEnv names an environment variable holding the token.
	BearerTokenEnv string `json:"bearerTokenEnv,omitempty"`
	// OAuth configures OAuth (auth: oauth).
	OAuth *OAuth `json:"oauth,omitempty"`

	// DirectTools registers this server's tools as tools of their own
	// (all of them, or the listed original names); nil means "not set".
	DirectTools *DirectTools `json:"directTools,omitempty"`
	// ToolPrefix names direct tools: server (default), short, none or mcp.
	ToolPrefix string `json:"toolPrefix,omitempty"`
	// IncludeTools and ExcludeTools are globs over original, prefixed and
	// resource-tool names; exclude applies after include.
	IncludeTools []string `json:"includeTools,omitempty"`
	ExcludeTools []string `json:"excludeTools,omitempty"`
	// ExposeResources exposes resources as read_<name> tools (default true).
	ExposeResources *bool `json:"exposeResources,omitempty"`
	// SearchKeywords are extra words search matches this server's tools by.
	SearchKeywords []string `json:"searchKeywords,omitempty"`

	// Source is the highest-precedence file that declares the server (""
	// for in-memory configuration).
	Source string `json:"source,omitempty"`
	// Provenance maps each field set (by its JSON name; timeout is recorded
	// as requestTimeoutMs) to the file it came from ("" for in-memory
	// configuration). Set by Load and Parse.
	Provenance map[string]string `json:"-"`

	// endpoint is the resolved endpoint, set by Load and Parse.
	endpoint *messages.Endpoint
	// warnings are problems with fields that do not make the entry invalid
	// (a non-boolean disabled, a trace that is not a boolean, a flow-owned
	// OAuth authorization parameter).
	warnings []Issue
}

// OAuth is a server's OAuth client configuration.
type OAuth struct {
	// GrantType is authorization_code (default) or client_credentials.
	GrantType string `json:"grantType,omitempty"`
	ClientID  string `json:"clientId,omitempty"`
	// ClientSecret is a secret.
	ClientSecret string `json:"clientSecret,omitempty"`
	Scope        string `json:"scope,omitempty"`
	RedirectURI  string `json:"redirectUri,omitempty"`
	ClientName   string `json:"clientName,omitempty"`
	ClientURI    string `json:"clientUri,omitempty"`
	// AuthorizationParams are extra parameters of the authorization URL
	// (provider-specific extensions); the flow's own parameters (client_id,
	// redirect_uri, scope, state, code_challenge, code_challenge_method,
	// response_type, resource) cannot be set here.
	AuthorizationParams map[string]string `json:"authorizationParams,omitempty"`
}

// DirectTools is the directTools field: true or false, or a list of the
// original names of the tools to expose directly.
type DirectTools struct {
	All   bool
	Names []string
}

// Enabled reports whether any tool is exposed directly.
func (d *DirectTools) Enabled() bool { return d != nil && (d.All || len(d.Names) > 0) }

// MarshalJSON writes true, false or the list.
func (d DirectTools) MarshalJSON() ([]byte, error) {
	if d.Names != nil {
		return json.Marshal(d.Names)
	}
	return json.Marshal(d.All)
}

// UnmarshalJSON reads true, false or a list of strings.
func (d *DirectTools) UnmarshalJSON(b []byte) error {
	var all bool
	if err := json.Unmarshal(b, &all); err == nil {
		*d = DirectTools{All: all}
		return nil
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return errors.New("config: directTools must be true, false or a list of tool names")
	}
	*d = DirectTools{Names: names}
	return nil
}

// Settings are the file-wide defaults.
type Settings struct {
	// IdleTimeout in minutes for servers that do not set their own.
	IdleTimeout *float64 `json:"idleTimeout,omitempty"`
	// RequestTimeoutMs for servers that do not set their own.
	RequestTimeoutMs *int64 `json:"requestTimeoutMs,omitempty"`
	// DirectTools for servers that do not set their own.
	DirectTools *DirectTools `json:"directTools,omitempty"`
	// ToolPrefix for servers that do not set their own.
	ToolPrefix string `json:"toolPrefix,omitempty"`
	// DisableProxyTool hides the mcp tool when every server is direct.
	DisableProxyTool bool `json:"disableProxyTool,omitempty"`
	// AutoAuth starts an OAuth server's authorization on its first 401
	// (and retries that request once) instead of asking for a login.
	AutoAuth bool `json:"autoAuth,omitempty"`
	// Trace turns on metadata-only protocol tracing for every server (a
	// server's own trace: true turns it on for that one): see
	// docs/tracing.md.
	Trace bool `json:"trace,omitempty"`
	// Output bounds what a tool result puts in front of the model.
	Output *OutputLimits `json:"output,omitempty"`
	// OutputGuardOff is seed 002's "outputGuard": false: tool output reaches
	// the model uncut (controls are still removed). Its object form sets
	// Output instead.
	OutputGuardOff bool `json:"outputGuardOff,omitempty"`
	// NpxInstallTimeoutMs is the budget of an npx package's first install,
	// separate from startupTimeoutMs (default 5 minutes).
	NpxInstallTimeoutMs *int64 `json:"npxInstallTimeoutMs,omitempty"`
}

// OutputLimits bound a tool result's preview; nil fields take defaults.
type OutputLimits struct {
	// MaxTextBytes and MaxLines cut long text to a preview (24 KiB, 1,000).
	MaxTextBytes *int `json:"maxTextBytes,omitempty"`
	MaxLines     *int `json:"maxLines,omitempty"`
	// MaxDetailsBytes bounds structured details (16 KiB).
	MaxDetailsBytes *int `json:"maxDetailsBytes,omitempty"`
}

// Endpoint returns what the transports open: the transport fields with
// variables interpolated, "~" and relative paths resolved, and secret
// values as references ("!command" is run by the connecting side, never
// here). A server that did not come from Load or Parse is resolved against
// an empty environment.
func (s Server) Endpoint() messages.Endpoint {
	if s.endpoint == nil {
		ep, _ := resolve(&s, nil, "", "")
		return ep
	}
	return cloneEndpoint(*s.endpoint)
}

func cloneEndpoint(ep messages.Endpoint) messages.Endpoint {
	ep.Args = cloneSlice(ep.Args)
	ep.Env, ep.Headers = cloneMap(ep.Env), cloneMap(ep.Headers)
	return ep
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

// clone returns a deep copy.
func (s Server) clone() Server {
	s.Args = cloneSlice(s.Args)
	s.Env, s.Headers = cloneMap(s.Env), cloneMap(s.Headers)
	s.IncludeTools, s.ExcludeTools, s.SearchKeywords = cloneSlice(s.IncludeTools), cloneSlice(s.ExcludeTools), cloneSlice(s.SearchKeywords)
	s.IdleTimeout, s.RequestTimeoutMs = clonePtr(s.IdleTimeout), clonePtr(s.RequestTimeoutMs)
	s.StartupTimeoutMs, s.CatalogTimeoutMs = clonePtr(s.StartupTimeoutMs), clonePtr(s.CatalogTimeoutMs)
	s.ExposeResources, s.OAuth = clonePtr(s.ExposeResources), clonePtr(s.OAuth)
	s.Provenance = cloneMap(s.Provenance)
	if s.endpoint != nil {
		ep := cloneEndpoint(*s.endpoint)
		s.endpoint = &ep
	}
	if s.DirectTools != nil {
		d := DirectTools{All: s.DirectTools.All, Names: cloneSlice(s.DirectTools.Names)}
		s.DirectTools = &d
	}
	return s
}

// clone returns a deep copy.
func (s Settings) clone() Settings {
	s.IdleTimeout, s.RequestTimeoutMs = clonePtr(s.IdleTimeout), clonePtr(s.RequestTimeoutMs)
	if s.DirectTools != nil {
		d := DirectTools{All: s.DirectTools.All, Names: cloneSlice(s.DirectTools.Names)}
		s.DirectTools = &d
	}
	if s.Output != nil {
		o := OutputLimits{MaxTextBytes: clonePtr(s.Output.MaxTextBytes), MaxLines: clonePtr(s.Output.MaxLines), MaxDetailsBytes: clonePtr(s.Output.MaxDetailsBytes)}
		s.Output = &o
	}
	return s
}

func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append([]T(nil), s...)
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
