package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// peer is a resource server and an authorization server in one real HTTP
// server on 127.0.0.1, configurable per test. It records what it saw.
type peer struct {
	t   *testing.T
	srv *httptest.Server

	mu sync.Mutex
	// configuration
	prmPath      string // where the PRM is served ("" = none)
	prmInHeader  bool
	prmResource  string // overrides the PRM resource
	asPath       string // issuer path ("" = root)
	asMetaPaths  []string
	scopeHeader  string
	prmScopes    []string
	noS256       bool
	needScope    string // scope the resource requires (403 otherwise)
	forbidAll    bool   // every authorized request gets 403 insufficient_scope
	rotate       bool   // with forbidAll: a new scope in each challenge
	forbids      int
	refreshable  bool
	authMethods  []string
	bigMetadata  bool
	redirectHost string // where /authorize redirects (default: the redirect_uri)
	// records
	seen       []string
	authorizes []url.Values
	tokenForms []url.Values
	tokenAuth  []string
	registered int
	issued     map[string]string // token -> scope
	n          int
	bearers    []string
}

func newPeer(t *testing.T) *peer {
	p := &peer{t: t, prmPath: "/.well-known/oauth-protected-resource/mcp", prmInHeader: true, issued: map[string]string{}}
	p.asMetaPaths = []string{"/.well-known/oauth-authorization-server"}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *peer) url() string    { return p.srv.URL + "/mcp" }
func (p *peer) issuer() string { return p.srv.URL + p.asPath }

func (p *peer) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, r.Method+" "+r.URL.Path)
	switch {
	case r.URL.Path == "/mcp":
		p.resource(w, r)
	case p.prmPath != "" && r.URL.Path == p.prmPath:
		res := p.url()
		if p.prmResource != "" {
			res = p.prmResource
		}
		writeJSON(w, map[string]any{"resource": res, "authorization_servers": []string{p.issuer()}, "scopes_supported": p.prmScopes})
	case contains(p.asMetaPaths, r.URL.Path):
		md := map[string]any{
			"issuer": p.issuer(), "authorization_endpoint": p.issuer() + "/authorize", "token_endpoint": p.issuer() + "/token",
			"registration_endpoint": p.issuer() + "/register", "response_types_supported": []string{"code"},
			"token_endpoint_auth_methods_supported": p.authMethods,
		}
		if !p.noS256 {
			md["code_challenge_methods_supported"] = []string{"S256"}
		}
		if p.bigMetadata {
			md["padding"] = strings.Repeat("x", MaxMetadata)
		}
		writeJSON(w, md)
	case r.URL.Path == p.asPath+"/register":
		p.registered++
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "dyn-client", "client_secret": "dyn-secret-SENTINEL", "token_endpoint_auth_method": req["token_endpoint_auth_method"]})
	case r.URL.Path == p.asPath+"/authorize":
		q := r.URL.Query()
		p.authorizes = append(p.authorizes, q)
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := url.Values{"code": {"code-" + q.Get("code_challenge")}, "state": {q.Get("state")}}
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	case r.URL.Path == p.asPath+"/token":
		_ = r.ParseForm()
		p.tokenForms = append(p.tokenForms, r.PostForm)
		p.tokenAuth = append(p.tokenAuth, r.Header.Get("Authorization"))
		p.token(w, r.PostForm)
	default:
		http.NotFound(w, r)
	}
}

func (p *peer) token(w http.ResponseWriter, f url.Values) {
	scope := ""
	if len(p.authorizes) > 0 {
		scope = p.authorizes[len(p.authorizes)-1].Get("scope")
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if f.Get("code") != "code-"+base64.RawURLEncoding.EncodeToString(sum[:]) {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		if !strings.HasPrefix(f.Get("refresh_token"), "refresh-SENTINEL") {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"error": "invalid_grant"})
			return
		}
	case "client_credentials":
		scope = f.Get("scope")
	}
	p.n++
	tok := fmt.Sprintf("tok-SENTINEL-%d", p.n)
	p.issued[tok] = scope
	out := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600}
	if scope != "" {
		out["scope"] = scope
	}
	if p.refreshable {
		out["refresh_token"] = fmt.Sprintf("refresh-SENTINEL-%d", p.n)
	}
	writeJSON(w, out)
}

func (p *peer) resource(w http.ResponseWriter, r *http.Request) {
	h := r.Header.Get("Authorization")
	p.bearers = append(p.bearers, h)
	tok, ok := strings.CutPrefix(h, "Bearer ")
	scope, known := p.issued[tok]
	if !ok || !known {
		var params []string
		params = append(params, `error="invalid_token"`)
		if p.scopeHeader != "" {
			params = append(params, fmt.Sprintf("scope=%q", p.scopeHeader))
		}
		if p.prmInHeader {
			params = append(params, fmt.Sprintf("resource_metadata=%q", p.srv.URL+p.prmPath))
		}
		w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if p.forbidAll {
		p.forbids++
		need := p.needScope
		if p.rotate {
			need = fmt.Sprintf("mcp:s%d", p.forbids)
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, need))
		w.WriteHeader(http.StatusForbidden)
		return
	}
	if p.needScope != "" && !scopesGranted(scope, p.needScope) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, p.needScope, p.srv.URL+p.prmPath))
		w.WriteHeader(http.StatusForbidden)
		return
	}
	writeJSON(w, map[string]any{"ok": true})
}

func writeJSON(w http.ResponseWriter, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = json.NewEncoder(w).Encode(v)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (p *peer) seenPaths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// post sends one request through an Authorizer's transport.
func post(t *testing.T, a *Authorizer, u string) (*http.Response, error) {
	t.Helper()
	hc := &http.Client{Transport: a.Wrap(nil)}
	resp, err := hc.Post(u, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}
