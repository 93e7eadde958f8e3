package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/mcprt/mcprt/config"
)

// identity is the part of a server's configuration that decides what its
// metadata is: how it is reached and as whom, and what of it is exposed.
// Lifecycle, timeouts, debug and descriptions are left out: changing them
// keeps the cache.
type identity struct {
	Command         string            `json:"command,omitempty"`
	Args            []string          `json:"args,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	Cwd             string            `json:"cwd,omitempty"`
	URL             string            `json:"url,omitempty"`
	Headers         map[string]string `json:"headers,omitempty"`
	Socket          string            `json:"socket,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	Auth            string            `json:"auth,omitempty"`
	BearerToken     string            `json:"bearerToken,omitempty"`
	BearerTokenEnv  string            `json:"bearerTokenEnv,omitempty"`
	OAuth           *config.OAuth     `json:"oauth,omitempty"`
	ExposeResources bool              `json:"exposeResources"`
	IncludeTools    []string          `json:"includeTools,omitempty"`
	ExcludeTools    []string          `json:"excludeTools,omitempty"`
}

// IdentityHash returns the hex SHA-256 of a server's identity fields:
// command, args, env, cwd, url, headers, socket, protocol version, the auth
// settings, exposeResources and the include/exclude lists. Lifecycle and
// timeouts are not part of it. Secret values (env and header values, bearer
// tokens, client secrets) enter the hash, never the cache in clear.
func IdentityHash(s config.Server) string {
	id := identity{
		Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd, URL: s.URL, Headers: s.Headers, Socket: s.Socket,
		ProtocolVersion: s.ProtocolVersion, Auth: s.Auth, BearerToken: s.BearerToken, BearerTokenEnv: s.BearerTokenEnv,
		OAuth: s.OAuth, ExposeResources: ExposesResources(s), IncludeTools: s.IncludeTools, ExcludeTools: s.ExcludeTools,
	}
	b, _ := json.Marshal(id) // map keys are sorted: the encoding is canonical
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ExposesResources reports whether a server's resources become read_<name>
// tools (exposeResources, default true).
func ExposesResources(s config.Server) bool { return s.ExposeResources == nil || *s.ExposeResources }
