package testenv

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// OIDCProviderVersion is the pinned version of oidc-provider.
const OIDCProviderVersion = "9.13.3"

// OIDCPeer is a real authorization server (oidc-provider) in front of a
// minimal MCP server that checks its tokens, in one Node process
// (oidcpeer.mjs).
type OIDCPeer struct {
	// MCPURL is the MCP endpoint (the protected resource); Issuer the
	// authorization server.
	MCPURL, Issuer string
	// KeyFile holds the PKCS#8 ES256 key of the private_key_jwt client
	// "cc-jwt"; CCSecret is the secret of the client_secret_basic client
	// "cc-basic".
	KeyFile, CCSecret string
	Proc              *Proc
}

// StartOIDCPeer installs oidc-provider on first use and starts the peer.
func StartOIDCPeer(t testing.TB, ccSecret string) *OIDCPeer {
	t.Helper()
	entry := npmInstall(t, "oidc-provider@"+OIDCProviderVersion, filepath.Join("oidc-provider", "lib", "index.js"))
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "oidcpeer.mjs")
	key := filepath.Join(t.TempDir(), "cc-jwt.pem")
	cmd := exec.Command(Node(t), script)
	cmd.Env = append(cmd.Environ(), "KEYFILE="+key, "CC_SECRET="+ccSecret, "OIDC_PROVIDER="+entry)
	p, line := start(t, cmd, func(l string) bool { return strings.HasPrefix(l, "READY ") })
	f := strings.Fields(line)
	if len(f) != 3 {
		t.Fatalf("oidcpeer: bad ready line %q", line)
	}
	return &OIDCPeer{MCPURL: f[1], Issuer: f[2], KeyFile: key, CCSecret: ccSecret, Proc: p}
}
