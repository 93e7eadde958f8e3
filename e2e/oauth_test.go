package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/auth"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// OAuth against a real authorization server in its own process:
// oidc-provider (dynamic registration, PKCE, resource indicators, refresh,
// client credentials, private_key_jwt) in front of an MCP server that
// checks its tokens (internal/testonly/testenv/oidcpeer.mjs).

const ccSecret = "cc-secret-SENTINEL-0123456789abcdef0123456789abcdef"

// browser drives oidc-provider's login and consent pages as a person
// would, following every redirect, the last one to the runtime's
// loopback listener.
type browser struct {
	t    *testing.T
	done chan error
}

var (
	formAction  = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
	promptInput = regexp.MustCompile(`name="prompt" value="([a-z]+)"`)
)

func (b *browser) show(authURL string) error {
	go func() {
		err := b.follow(authURL)
		if err != nil {
			b.t.Logf("browser: %v", err)
		}
		b.done <- err
	}()
	return nil
}

func (b *browser) follow(authURL string) error {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(authURL)
	for step := 0; step < 6; step++ {
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := formAction.FindSubmatch(body)
		if m == nil {
			if !strings.Contains(string(body), "Authorization received") {
				return fmt.Errorf("unexpected page (HTTP %d): %.300s", resp.StatusCode, body)
			}
			return nil
		}
		action, _ := resp.Request.URL.Parse(string(m[1]))
		form := url.Values{"login": {"alice"}, "password": {"any"}}
		if p := promptInput.FindSubmatch(body); p != nil {
			form.Set("prompt", string(p[1]))
		}
		resp, err = c.PostForm(action.String(), form)
	}
	return fmt.Errorf("too many pages")
}

func oauthRuntime(t *testing.T, peer *testenv.OIDCPeer, set auth.Settings, rcv auth.Receiver) (*mcprt.Runtime, mcprt.Tool, *auth.MemoryStore) {
	t.Helper()
	store := &auth.MemoryStore{}
	f := &config.File{MCPServers: map[string]config.Server{"remote": {URL: peer.MCPURL}}}
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{Config: f, AgentDir: t.TempDir(),
		Auth: mcprt.AuthOptions{Store: store, Receiver: rcv, Settings: map[string]auth.Settings{"remote": set}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	tool, _ := rt.Tool(mcprt.MCPToolName)
	return rt, tool, store
}

func whoami(t *testing.T, tool mcprt.Tool) string {
	t.Helper()
	res := tool.Execute(testCtx(t), json.RawMessage(`{"tool":"remote_whoami","args":{}}`))
	if res.IsError {
		t.Fatalf("call failed: %s", res.Text)
	}
	return res.Text
}

// A person logs in through the browser: dynamic registration, PKCE S256,
// the resource indicator; the token works, is bound to the server URL, and
// no secret shows in status or results.
func TestOAuthBrowserLoginRealProvider(t *testing.T) {
	peer := testenv.StartOIDCPeer(t, ccSecret)
	b := &browser{t: t, done: make(chan error, 1)}
	rt, tool, store := oauthRuntime(t, peer, auth.Settings{}, auth.Loopback{Show: b.show})
	text := whoami(t, tool)
	if err := <-b.done; err != nil {
		t.Fatalf("browser: %v", err)
	}
	if !strings.Contains(text, "scope=mcp:read") {
		t.Fatalf("whoami: %s", text)
	}
	rec, _ := store.Load("remote")
	if rec == nil || rec.URL != peer.MCPURL || rec.Token == nil || rec.Token.RefreshToken == "" || rec.Client == nil || !rec.Client.Registered {
		t.Fatalf("stored record %+v", rec)
	}
	st, err := rt.Authorizer("remote").Status()
	if err != nil || !st.Authorized || !st.Refreshable {
		t.Fatalf("status %+v %v", st, err)
	}
	status := tool.Execute(testCtx(t), json.RawMessage(`{}`))
	stb, _ := json.Marshal(st)
	for _, s := range []string{status.Text, string(stb), text} {
		if strings.Contains(s, rec.Token.AccessToken) || strings.Contains(s, rec.Token.RefreshToken) {
			t.Fatalf("a token leaked: %s", s)
		}
	}
}

// The refresh token is used before expiry (on the injected clock), with
// the resource; the new access token works.
func TestOAuthRefreshRealProvider(t *testing.T) {
	peer := testenv.StartOIDCPeer(t, ccSecret)
	b := &browser{t: t, done: make(chan error, 1)}
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := &auth.Authorizer{Server: "remote", URL: peer.MCPURL, Receiver: auth.Loopback{Show: b.show}, Interactive: true, Clock: clk}
	if err := a.Login(testCtx(t), a.Probe(testCtx(t))); err != nil {
		t.Fatalf("%v\n%s", err, peer.Proc.Output())
	}
	if err := <-b.done; err != nil {
		t.Fatalf("%v\n%s", err, peer.Proc.Output())
	}
	first, _ := a.Current(testCtx(t))
	clk.Advance(59*time.Minute + 30*time.Second)
	second, err := a.Current(testCtx(t))
	if err != nil || second == "" || second == first {
		t.Fatalf("no refresh: %v", err)
	}
	if code := postMCP(t, a, peer.MCPURL); code != 200 {
		t.Fatalf("refreshed token refused: HTTP %d", code)
	}
	if a.Flows() != 1 {
		t.Fatalf("flows %d", a.Flows())
	}
}

func postMCP(t *testing.T, a *auth.Authorizer, u string) int {
	hc := &http.Client{Transport: a.Wrap(nil)}
	resp, err := hc.Post(u, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Agents with no person present: client credentials with a secret
// (client_secret_basic) and with private_key_jwt, through the runtime.
func TestOAuthClientCredentialsRealProvider(t *testing.T) {
	peer := testenv.StartOIDCPeer(t, ccSecret)
	key, err := os.ReadFile(peer.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	for name, set := range map[string]auth.Settings{
		"basic": {Grant: auth.GrantClientCredentials, ClientID: "cc-basic", ClientSecret: ccSecret, Scope: "mcp:read"},
		"jwt":   {Grant: auth.GrantClientCredentials, ClientID: "cc-jwt", PrivateKeyPEM: key, SigningAlg: "ES256", Scope: "mcp:read"},
	} {
		t.Run(name, func(t *testing.T) {
			_, tool, _ := oauthRuntime(t, peer, set, nil)
			if text := whoami(t, tool); !strings.Contains(text, "client="+set.ClientID) {
				t.Fatalf("whoami: %s", text)
			}
		})
	}
	// A wrong secret is a clear error that names the server, not the secret.
	_, tool, _ := oauthRuntime(t, peer, auth.Settings{Grant: auth.GrantClientCredentials, ClientID: "cc-basic", ClientSecret: ccSecret + "x"}, nil)
	res := tool.Execute(testCtx(t), json.RawMessage(`{"tool":"remote_whoami","args":{}}`))
	if !res.IsError || !strings.Contains(res.Text, "token endpoint") || strings.Contains(res.Text, "SENTINEL") {
		t.Fatalf("wrong secret: %s", res.Text)
	}
}

// Headless (seed 002): with no browser here and no autoAuth, a call fails
// asking for authorization; auth-start returns the URL, a person approves
// elsewhere and pastes the redirect back with auth-complete; the call then
// works.
func TestOAuthHeadlessStartCompleteRealProvider(t *testing.T) {
	peer := testenv.StartOIDCPeer(t, ccSecret)
	store := &auth.MemoryStore{}
	f := &config.File{MCPServers: map[string]config.Server{"remote": {URL: peer.MCPURL, Auth: "oauth"}}}
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{Config: f, AgentDir: t.TempDir(), Auth: mcprt.AuthOptions{Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	tool, _ := rt.Tool(mcprt.MCPToolName)
	exec := func(args string) mcprt.Result { return tool.Execute(testCtx(t), json.RawMessage(args)) }
	if res := exec(`{"tool":"remote_whoami","args":{}}`); !res.IsError || !strings.Contains(res.Text, "runtime auth login remote") {
		t.Fatalf("before login: %s", res.Text)
	}
	start := exec(`{"action":"auth-start","server":"remote"}`)
	authURL, _ := start.Details["authorizationUrl"].(string)
	if start.IsError || !strings.HasPrefix(authURL, peer.Issuer) {
		t.Fatalf("auth-start: %s", start.Text)
	}
	// The person's browser, elsewhere: it logs in and consents, and is sent
	// to a localhost page that does not load; the address bar has the URL.
	var pasted string
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Hostname() == "127.0.0.1" && strings.HasPrefix(req.URL.Path, "/callback") {
			pasted = req.URL.String()
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := c.Get(authURL)
	for step := 0; err == nil && pasted == "" && step < 6; step++ {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := formAction.FindSubmatch(body)
		if m == nil {
			t.Fatalf("unexpected page: %.300s", body)
		}
		action, _ := resp.Request.URL.Parse(string(m[1]))
		form := url.Values{"login": {"alice"}, "password": {"any"}}
		if p := promptInput.FindSubmatch(body); p != nil {
			form.Set("prompt", string(p[1]))
		}
		resp, err = c.PostForm(action.String(), form)
	}
	if err != nil || pasted == "" {
		t.Fatalf("browser: %v", err)
	}
	args, _ := json.Marshal(map[string]any{"action": "auth-complete", "server": "remote", "args": map[string]string{"redirectUrl": pasted}})
	if res := exec(string(args)); res.IsError {
		t.Fatalf("auth-complete: %s", res.Text)
	}
	if text := whoami(t, tool); !strings.Contains(text, "scope=mcp:read") {
		t.Fatalf("after login: %s", text)
	}
	rec, _ := store.Load("remote")
	for _, s := range []string{start.Text, exec(`{}`).Text} {
		if rec == nil || strings.Contains(s, rec.Token.AccessToken) {
			t.Fatalf("token leaked or missing: %s", s)
		}
	}
}

// A configured oauth block: client credentials whose clientSecret is a
// "!command", run when the client authenticates.
func TestOAuthConfigSecretCommandRealProvider(t *testing.T) {
	peer := testenv.StartOIDCPeer(t, ccSecret)
	f := &config.File{MCPServers: map[string]config.Server{"remote": {URL: peer.MCPURL, Auth: "oauth", OAuth: &config.OAuth{
		GrantType: "client_credentials", ClientID: "cc-basic", ClientSecret: "!printf %s " + ccSecret, Scope: "mcp:read"}}}}
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{Config: f, AgentDir: t.TempDir(), Auth: mcprt.AuthOptions{Store: &auth.MemoryStore{}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	tool, _ := rt.Tool(mcprt.MCPToolName)
	if text := whoami(t, tool); !strings.Contains(text, "client=cc-basic") {
		t.Fatalf("whoami: %s", text)
	}
}
