package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Grant type URNs of RFC 7523 and RFC 8693 (cross-app access).
const (
	grantJWTBearerURN     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTokenExchangeURN = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDToken      = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG        = "urn:ietf:params:oauth:token-type:id-jag"
)

// randomString is 32 random bytes, base64url: a state or a jti.
func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// chooseScope picks the scope to request: the challenge's, else the
// configured one, else the PRM's scopes_supported, else none. A step-up
// (403 insufficient_scope) asks for the union with what was granted.
func chooseScope(ch Challenge, d *Discovery, configured, granted string) string {
	var s string
	switch {
	case ch.Scope != "":
		s = ch.Scope
	case configured != "":
		s = configured
	case len(d.ScopesSupported) > 0:
		s = strings.Join(d.ScopesSupported, " ")
	}
	if ch.InsufficientScope() {
		s = unionScopes(granted, s)
	}
	return s
}

// unionScopes joins two space-separated scope lists without duplicates,
// in first-seen order.
func unionScopes(a, b string) string {
	var out []string
	for _, s := range append(strings.Fields(a), strings.Fields(b)...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// scopesGranted reports whether every scope of want is in have.
func scopesGranted(have, want string) bool {
	h := strings.Fields(have)
	for _, s := range strings.Fields(want) {
		if !slices.Contains(h, s) {
			return false
		}
	}
	return true
}

// codeFlow runs the authorization-code grant with PKCE S256, state and the
// resource parameter, and redeems the code.
func codeFlow(ctx context.Context, hc *http.Client, rcv Receiver, d *Discovery, s Settings, stored *Client, scope string, now func() time.Time) (*Token, *Client, error) {
	if d.Server.AuthorizationEndpoint == "" {
		return nil, nil, errors.New("the authorization server metadata has no authorization_endpoint")
	}
	if !d.supportsS256() {
		return nil, nil, errors.New("the authorization server does not advertise PKCE S256 (code_challenge_methods_supported); refusing the authorization-code flow")
	}
	if rcv == nil {
		return nil, nil, errors.New("no way to reach a browser for the authorization-code flow")
	}
	preferred := s.RedirectURI
	if preferred == "" && stored != nil && stored.Registered && stored.Issuer == d.Server.Issuer {
		preferred = stored.RedirectURI
	}
	p, err := rcv.Open(preferred)
	if err != nil && preferred != "" && s.RedirectURI == "" {
		p, err = rcv.Open("") // the registered port is taken: register anew
	}
	if err != nil {
		return nil, nil, err
	}
	defer p.Close()
	client, err := chooseClient(ctx, hc, d, s, stored, p.RedirectURI())
	if err != nil {
		return nil, nil, err
	}
	verifier, state := oauth2.GenerateVerifier(), randomString()
	cfg := oauth2.Config{ClientID: client.ID, RedirectURL: p.RedirectURI(), Endpoint: oauth2.Endpoint{AuthURL: d.Server.AuthorizationEndpoint}, Scopes: strings.Fields(scope)}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	if d.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", d.Resource))
	}
	q, err := p.Await(ctx, cfg.AuthCodeURL(state, opts...))
	if err != nil {
		return nil, nil, err
	}
	if e := q.Get("error"); e != "" {
		return nil, nil, fmt.Errorf("the authorization server refused: %s", oneWord(e))
	}
	if q.Get("state") != state {
		return nil, nil, errors.New("the redirect's state does not match this flow (a stale or forged redirect); refused")
	}
	code := q.Get("code")
	if code == "" {
		return nil, nil, errors.New("the redirect carries no authorization code")
	}
	tok, err := exchangeCode(ctx, hc, d.Server.TokenEndpoint, *client, code, verifier, d.Resource, now())
	if err != nil {
		return nil, nil, err
	}
	return tok, client, nil
}

// clientCredentials runs the client_credentials grant with a secret or a
// private_key_jwt assertion.
func clientCredentials(ctx context.Context, hc *http.Client, d *Discovery, s Settings, scope string, now time.Time) (*Token, error) {
	client, err := chooseClient(ctx, hc, d, s, nil, "")
	if err != nil {
		return nil, err
	}
	params := url.Values{}
	if scope != "" {
		params.Set("scope", scope)
	}
	if d.Resource != "" {
		params.Set("resource", d.Resource)
	}
	if err := addAssertion(params, s, *client, d.Server.Issuer, now); err != nil {
		return nil, err
	}
	return tokenRequest{endpoint: d.Server.TokenEndpoint, client: *client, params: params}.do(ctx, hc, now)
}

// addAssertion adds a private_key_jwt client assertion (aud = the issuer).
func addAssertion(params url.Values, s Settings, c Client, issuer string, now time.Time) error {
	if c.AuthMethod != AuthPrivateKeyJWT {
		return nil
	}
	a, err := clientAssertion(s, c.ID, issuer, now, randomString())
	if err != nil {
		return err
	}
	params.Set("client_assertion_type", clientAssertionType)
	params.Set("client_assertion", a)
	return nil
}

// crossApp runs cross-app access (SEP-990): the IdP's ID token is
// exchanged at the IdP for an ID-JAG for this authorization server and
// resource (RFC 8693), which is then presented as a jwt-bearer assertion
// (RFC 7523) with the client's own authentication.
func crossApp(ctx context.Context, hc *http.Client, d *Discovery, s Settings, scope string, now time.Time) (*Token, error) {
	ex := url.Values{
		"grant_type": {grantTokenExchangeURN}, "subject_token": {s.IDPIDToken}, "subject_token_type": {tokenTypeIDToken},
		"requested_token_type": {tokenTypeIDJAG}, "audience": {d.Server.Issuer},
	}
	if d.Resource != "" {
		ex.Set("resource", d.Resource)
	}
	if scope != "" {
		ex.Set("scope", scope)
	}
	jag, err := tokenRequest{endpoint: s.IDPTokenEndpoint, client: Client{ID: s.IDPClientID, AuthMethod: AuthNone}, params: ex}.do(ctx, hc, now)
	if err != nil {
		return nil, fmt.Errorf("IdP token exchange: %w", err)
	}
	client, err := chooseClient(ctx, hc, d, s, nil, "")
	if err != nil {
		return nil, err
	}
	params := url.Values{"grant_type": {grantJWTBearerURN}, "assertion": {jag.AccessToken}}
	if err := addAssertion(params, s, *client, d.Server.Issuer, now); err != nil {
		return nil, err
	}
	return tokenRequest{endpoint: d.Server.TokenEndpoint, client: *client, params: params}.do(ctx, hc, now)
}

// refresh redeems a refresh token (with the resource it was issued for).
func refresh(ctx context.Context, hc *http.Client, t *Token, c Client, s Settings, issuer string, now time.Time) (*Token, error) {
	params := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.RefreshToken}}
	if t.Resource != "" {
		params.Set("resource", t.Resource)
	}
	if err := addAssertion(params, s, c, issuer, now); err != nil {
		return nil, err
	}
	nt, err := tokenRequest{endpoint: t.TokenEndpoint, client: c, params: params}.do(ctx, hc, now)
	if err != nil {
		return nil, err
	}
	if nt.RefreshToken == "" {
		nt.RefreshToken = t.RefreshToken // the server kept the old one valid
	}
	if nt.Scope == "" {
		nt.Scope = t.Scope
	}
	nt.Resource = t.Resource
	return nt, nil
}
