package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcprt/mcprt/clock"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func codeAuthorizer(p *peer) *Authorizer {
	return &Authorizer{Server: "s", URL: p.url(), Receiver: AutoRedirect{}, Interactive: true, Clock: clock.NewManual(start)}
}

func TestParseChallenge(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://h/.well-known/x", error_description="say \"hi\", ok"`)
	c := ParseChallenge(403, h)
	if c.Error != "insufficient_scope" || c.Scope != "a b" || c.ResourceMetadata != "https://h/.well-known/x" || !c.InsufficientScope() {
		t.Fatalf("got %+v", c)
	}
	h = http.Header{"Www-Authenticate": {`Bearer realm=example`}}
	if c := ParseChallenge(401, h); c.Scope != "" || c.ResourceMetadata != "" {
		t.Fatalf("got %+v", c)
	}
}

// The default flow: PRM from the header, RFC 8414 metadata, DCR, PKCE
// S256 with state and resource, then the request is retried once.
func TestCodeFlowFromHeader(t *testing.T) {
	p := newPeer(t)
	a := codeAuthorizer(p)
	resp, err := post(t, a, p.url())
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", resp, err)
	}
	if p.registered != 1 || len(p.authorizes) != 1 || len(p.tokenForms) != 1 {
		t.Fatalf("registered %d, authorizes %d, tokens %d", p.registered, len(p.authorizes), len(p.tokenForms))
	}
	q, f := p.authorizes[0], p.tokenForms[0]
	if q.Get("code_challenge_method") != "S256" || q.Get("state") == "" || q.Get("resource") != p.url() || q.Has("scope") {
		t.Fatalf("authorize query %v", q)
	}
	if f.Get("resource") != p.url() || f.Get("code_verifier") == "" || f.Get("client_id") != "dyn-client" {
		t.Fatalf("token form %v", f)
	}
	if slices.Contains(p.seenPaths(), "GET /.well-known/oauth-protected-resource") {
		t.Fatal("root PRM fetched although the header named one")
	}
	// A second request reuses the token.
	if _, err := post(t, a, p.url()); err != nil || len(p.authorizes) != 1 {
		t.Fatalf("second request: %v, authorizes %d", err, len(p.authorizes))
	}
}

// Without a header PRM: path-based, then root; issuer with a path: path
// insertion, then OIDC forms, never the root metadata.
func TestDiscoveryOrder(t *testing.T) {
	p := newPeer(t)
	p.prmInHeader, p.prmPath, p.asPath = false, "/.well-known/oauth-protected-resource", "/tenant1"
	p.prmResource = p.srv.URL
	p.asMetaPaths = []string{"/tenant1/.well-known/openid-configuration"}
	a := codeAuthorizer(p)
	if resp, err := post(t, a, p.url()); err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", resp, err)
	}
	want := []string{
		"GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/oauth-protected-resource",
		"GET /.well-known/oauth-authorization-server/tenant1", "GET /.well-known/openid-configuration/tenant1",
		"GET /tenant1/.well-known/openid-configuration",
	}
	seen := p.seenPaths()
	var got []string
	for _, s := range seen {
		if strings.Contains(s, ".well-known") {
			got = append(got, s)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("discovery order\n got %v\nwant %v", got, want)
	}
}

// 2025-03-26: no PRM, no metadata: default endpoints at the origin, no
// resource parameter.
func TestLegacyFallbackEndpoints(t *testing.T) {
	p := newPeer(t)
	p.prmInHeader, p.prmPath, p.asMetaPaths = false, "", nil
	a := codeAuthorizer(p)
	if resp, err := post(t, a, p.url()); err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", resp, err)
	}
	if p.registered != 1 || p.authorizes[0].Has("resource") {
		t.Fatalf("registered %d, authorize %v", p.registered, p.authorizes[0])
	}
}

func TestScopeSelectionAndStepUp(t *testing.T) {
	p := newPeer(t)
	p.scopeHeader, p.prmScopes, p.needScope = "mcp:basic", []string{"mcp:basic", "mcp:read"}, "mcp:basic mcp:write"
	a := codeAuthorizer(p)
	if resp, err := post(t, a, p.url()); err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", resp, err)
	}
	if len(p.authorizes) != 2 || p.authorizes[0].Get("scope") != "mcp:basic" || p.authorizes[1].Get("scope") != "mcp:basic mcp:write" {
		t.Fatalf("authorizes %v", p.authorizes)
	}
	// From scopes_supported when the challenge has none.
	p2 := newPeer(t)
	p2.prmScopes = []string{"mcp:basic", "mcp:read"}
	if _, err := post(t, codeAuthorizer(p2), p2.url()); err != nil || p2.authorizes[0].Get("scope") != "mcp:basic mcp:read" {
		t.Fatalf("scopes_supported: %v %v", err, p2.authorizes)
	}
}

// A 403 for a scope already granted is not retried: one authorization,
// then a clear error. A server asking for a new scope each time gets at
// most MaxAuthorizations authorizations for the request.
func TestStepUpBounded(t *testing.T) {
	p := newPeer(t)
	p.scopeHeader, p.needScope, p.forbidAll = "mcp:admin", "mcp:admin", true
	_, err := post(t, codeAuthorizer(p), p.url())
	if err == nil || !strings.Contains(err.Error(), "already granted") || len(p.authorizes) != 1 {
		t.Fatalf("err %v, authorizes %d", err, len(p.authorizes))
	}
	p2 := newPeer(t)
	p2.scopeHeader, p2.forbidAll, p2.rotate = "mcp:admin", true, true
	_, err = post(t, codeAuthorizer(p2), p2.url())
	if err == nil || len(p2.authorizes) != MaxAuthorizations {
		t.Fatalf("err %v, authorizes %d", err, len(p2.authorizes))
	}
}

func TestBadInput(t *testing.T) {
	for name, mod := range map[string]func(p *peer){
		"resource on another origin": func(p *peer) { p.prmResource = "https://evil.example.com/mcp" },
		"metadata too large":         func(p *peer) { p.bigMetadata = true },
		"no S256":                    func(p *peer) { p.noS256 = true },
	} {
		t.Run(name, func(t *testing.T) {
			p := newPeer(t)
			mod(p)
			_, err := post(t, codeAuthorizer(p), p.url())
			if err == nil || len(p.authorizes) != 0 {
				t.Fatalf("err %v, authorizes %d", err, len(p.authorizes))
			}
			var ae *Error
			if !errors.As(err, &ae) || ae.Server != "s" || strings.Contains(err.Error(), "SENTINEL") {
				t.Fatalf("error %q", err)
			}
		})
	}
}

// forgedReceiver returns a redirect with another state.
type forgedReceiver struct{}

func (forgedReceiver) Open(string) (Pending, error) { return forged{}, nil }

type forged struct{}

func (forged) RedirectURI() string { return "http://127.0.0.1:1/callback" }
func (forged) Close()              {}
func (forged) Await(context.Context, string) (url.Values, error) {
	return map[string][]string{"code": {"c"}, "state": {"other"}}, nil
}

func TestWrongStateRefused(t *testing.T) {
	p := newPeer(t)
	a := codeAuthorizer(p)
	a.Receiver = forgedReceiver{}
	_, err := post(t, a, p.url())
	if err == nil || !strings.Contains(err.Error(), "state") || len(p.tokenForms) != 0 {
		t.Fatalf("err %v, token requests %d", err, len(p.tokenForms))
	}
}

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	p := newPeer(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	a := &Authorizer{Server: "s", URL: p.url(), Clock: clock.NewManual(start),
		Settings: Settings{Grant: GrantClientCredentials, ClientID: "cc", PrivateKeyPEM: pemKey, SigningAlg: "ES256"}}
	if resp, err := post(t, a, p.url()); err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", resp, err)
	}
	f := p.tokenForms[0]
	if f.Get("grant_type") != "client_credentials" || f.Get("client_assertion_type") != clientAssertionType || f.Get("resource") != p.url() {
		t.Fatalf("form %v", f)
	}
	tok, err := jwt.ParseSigned(f.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.Claims
	if err := tok.Claims(&key.PublicKey, &c); err != nil {
		t.Fatal(err)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: "cc", Subject: "cc", AnyAudience: jwt.Audience{p.issuer()}, Time: start}, 0); err != nil || c.ID == "" {
		t.Fatalf("claims %+v: %v", c, err)
	}
}

func TestClientCredentialsBasic(t *testing.T) {
	p := newPeer(t)
	p.authMethods = []string{"client_secret_basic"}
	a := &Authorizer{Server: "s", URL: p.url(), Clock: clock.NewManual(start),
		Settings: Settings{Grant: GrantClientCredentials, ClientID: "cc", ClientSecret: "sec"}}
	if _, err := post(t, a, p.url()); err != nil {
		t.Fatal(err)
	}
	if p.tokenAuth[0] != "Basic Y2M6c2Vj" || p.tokenForms[0].Has("client_secret") {
		t.Fatalf("auth %q form %v", p.tokenAuth[0], p.tokenForms[0])
	}
}

// Refresh before expiry, on the injected clock; a token is never sent to
// another origin.
func TestRefreshAndOrigin(t *testing.T) {
	p := newPeer(t)
	p.refreshable = true
	clk := clock.NewManual(start)
	a := codeAuthorizer(p)
	a.Clock = clk
	if _, err := post(t, a, p.url()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if _, err := post(t, a, p.url()); err != nil {
		t.Fatal(err)
	}
	if len(p.authorizes) != 1 || len(p.tokenForms) != 2 || p.tokenForms[1].Get("grant_type") != "refresh_token" || p.tokenForms[1].Get("resource") != p.url() {
		t.Fatalf("authorizes %d, token forms %v", len(p.authorizes), p.tokenForms)
	}
	other := newPeer(t)
	other.prmPath = ""
	resp, err := post(t, a, other.url())
	if err != nil || resp.StatusCode != 401 || other.bearers[0] != "" {
		t.Fatalf("other origin got %q (%v)", other.bearers, err)
	}
}

// Tokens are bound to the URL: a stored record for another URL is ignored.
func TestStoreBoundToURL(t *testing.T) {
	st := &MemoryStore{}
	_ = st.Save("s", &Record{URL: "http://127.0.0.1:1/mcp", Token: &Token{AccessToken: "tok-SENTINEL-9"}})
	p := newPeer(t)
	p.issued["tok-SENTINEL-9"] = ""
	a := codeAuthorizer(p)
	a.Store = st
	if _, err := post(t, a, p.url()); err != nil {
		t.Fatal(err)
	}
	if p.bearers[0] != "" || len(p.authorizes) != 1 {
		t.Fatalf("bearers %q authorizes %d", p.bearers, len(p.authorizes))
	}
}

func TestNonInteractiveAsksForLogin(t *testing.T) {
	p := newPeer(t)
	a := codeAuthorizer(p)
	a.Interactive = false
	_, err := post(t, a, p.url())
	if err == nil || !strings.Contains(err.Error(), "runtime auth login s") || len(p.authorizes) != 0 {
		t.Fatalf("err %v", err)
	}
}

// A token endpoint that stalls is bounded by the caller's deadline (the
// server's startup deadline when a dial triggers it): cancelling the
// request's context ends the flow with a clear error, no token.
func TestStalledTokenEndpoint(t *testing.T) {
	p := newPeer(t)
	reached, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	inner := p.srv.Config.Handler
	p.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			close(reached)
			select { // stalls until the client gives up, or the test ends
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		inner.ServeHTTP(w, r)
	})
	a := codeAuthorizer(p)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-reached
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url(), strings.NewReader(`{}`))
	_, err := (&http.Client{Transport: a.Wrap(nil)}).Do(req)
	if err == nil || !strings.Contains(err.Error(), "token endpoint") || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("err %v", err)
	}
	if st, _ := a.Status(); st.Authorized {
		t.Fatal("authorized after a stalled token endpoint")
	}
}
