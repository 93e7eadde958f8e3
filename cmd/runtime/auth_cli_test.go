package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

const cliSecret = "cc-secret-SENTINEL-cli-0123456789abcdef0123456789abcdef"

// secretsIn lists the secrets the peer saw: the client secret and every
// access token it accepted.
func secretsIn(peer *testenv.OIDCPeer) []string {
	out := []string{cliSecret}
	for _, line := range strings.Split(peer.Proc.Output(), "\n") {
		if tok, ok := strings.CutPrefix(line, "ACCEPTED "); ok && tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

// noSecretAnywhere fails if a secret is in the output or in any file
// under the given directories (metadata cache, config, anything written).
func noSecretAnywhere(t *testing.T, secrets []string, texts []string, dirs ...string) {
	t.Helper()
	for _, s := range secrets {
		for _, text := range texts {
			if strings.Contains(text, s) {
				t.Fatalf("a secret reached the output:\n%s", text)
			}
		}
		for _, d := range dirs {
			_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
				if err != nil || e.IsDir() {
					return nil
				}
				if b, _ := os.ReadFile(p); strings.Contains(string(b), s) {
					t.Fatalf("a secret was written to %s", p)
				}
				return nil
			})
		}
	}
}

// The CLI drives machine grants on an ad-hoc server against a real
// authorization server (oidc-provider, its own process), with -v logs on,
// and neither the secret nor a token appears in its output or files.
func TestCLIOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	peer := testenv.StartOIDCPeer(t, cliSecret)
	home, agent := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "MCPRT_AGENT_DIR=" + agent, "MCPRT_OAUTH_CLIENT_SECRET=" + cliSecret}
	var texts []string
	o := runCLI(t, env, "-v", "--url", peer.MCPURL, "--oauth-grant", "client_credentials", "--oauth-client-id", "cc-basic", "call", "whoami", "{}")
	if o.code != 0 || !strings.Contains(o.stdout, "client=cc-basic") {
		t.Fatalf("basic: exit %d\nstdout %s\nstderr %s", o.code, o.stdout, o.stderr)
	}
	texts = append(texts, o.stdout, o.stderr)
	o = runCLI(t, env, "-v", "--url", peer.MCPURL, "--oauth-grant", "client_credentials", "--oauth-client-id", "cc-jwt",
		"--oauth-private-key-file", peer.KeyFile, "--oauth-signing-alg", "ES256", "call", "whoami", "{}")
	if o.code != 0 || !strings.Contains(o.stdout, "client=cc-jwt") {
		t.Fatalf("private_key_jwt: exit %d\nstdout %s\nstderr %s", o.code, o.stdout, o.stderr)
	}
	texts = append(texts, o.stdout, o.stderr)
	// A wrong secret: a clear error naming the server, exit 1, no secret.
	bad := append(env[:2:2], "MCPRT_OAUTH_CLIENT_SECRET="+cliSecret+"-wrong")
	o = runCLI(t, bad, "-v", "--url", peer.MCPURL, "--oauth-grant", "client_credentials", "--oauth-client-id", "cc-basic", "call", "whoami", "{}")
	if o.code != 1 || !strings.Contains(o.stderr, `server "adhoc": authorization failed`) || !strings.Contains(o.stderr, "token endpoint") {
		t.Fatalf("wrong secret: exit %d\nstderr %s", o.code, o.stderr)
	}
	texts = append(texts, o.stdout, o.stderr)
	secrets := secretsIn(peer)
	if len(secrets) < 3 {
		t.Fatalf("the peer accepted %d tokens", len(secrets)-1)
	}
	noSecretAnywhere(t, secrets, texts, home, agent)
}
