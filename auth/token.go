package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Token is an access token with what renewing it needs. AccessToken and
// RefreshToken are secrets; String never prints them.
type Token struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// TokenEndpoint and Resource are where the token came from and what
	// it is for (the RFC 8707 resource), for refreshing it.
	TokenEndpoint string `json:"token_endpoint,omitempty"`
	Resource      string `json:"resource,omitempty"`
}

// String describes the token without its values.
func (t Token) String() string {
	return fmt.Sprintf("auth.Token{scope %q, refreshable %t}", t.Scope, t.RefreshToken != "")
}

// GoString redacts like String.
func (t Token) GoString() string { return t.String() }

// expiresSoon reports whether the token expires within a minute of now.
func (t *Token) expiresSoon(now time.Time) bool {
	return !t.Expiry.IsZero() && now.Add(time.Minute).After(t.Expiry)
}

// tokenRequest is one request to a token endpoint.
type tokenRequest struct {
	endpoint string
	client   Client
	params   url.Values
}

// do posts the request through golang.org/x/oauth2 (client
// authentication, response parsing, error codes) and converts the answer.
func (r tokenRequest) do(ctx context.Context, hc *http.Client, now time.Time) (*Token, error) {
	cfg := clientcredentials.Config{ClientID: r.client.ID, TokenURL: r.endpoint, EndpointParams: r.params}
	switch r.client.AuthMethod {
	case AuthClientSecretBasic:
		cfg.ClientSecret, cfg.AuthStyle = r.client.Secret, oauth2.AuthStyleInHeader
	case AuthClientSecretPost:
		cfg.ClientSecret, cfg.AuthStyle = r.client.Secret, oauth2.AuthStyleInParams
	default: // none, private_key_jwt (the assertion is in params): client_id in the body
		cfg.AuthStyle = oauth2.AuthStyleInParams
	}
	tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	if err != nil {
		return nil, tokenError(r.endpoint, err)
	}
	return convertToken(tok, r.endpoint, now)
}

// exchangeCode redeems an authorization code with its PKCE verifier.
func exchangeCode(ctx context.Context, hc *http.Client, endpoint string, c Client, code, verifier, resource string, now time.Time) (*Token, error) {
	cfg := oauth2.Config{ClientID: c.ID, RedirectURL: c.RedirectURI, Endpoint: oauth2.Endpoint{TokenURL: endpoint, AuthStyle: oauth2.AuthStyleInParams}}
	switch c.AuthMethod {
	case AuthClientSecretBasic:
		cfg.ClientSecret, cfg.Endpoint.AuthStyle = c.Secret, oauth2.AuthStyleInHeader
	case AuthClientSecretPost:
		cfg.ClientSecret = c.Secret
	}
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}
	if resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", resource))
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), code, opts...)
	if err != nil {
		return nil, tokenError(endpoint, err)
	}
	return convertToken(tok, endpoint, now)
}

// convertToken keeps what we need of an oauth2.Token, computing the expiry
// on the injected clock.
func convertToken(tok *oauth2.Token, endpoint string, now time.Time) (*Token, error) {
	if tok.AccessToken == "" {
		return nil, fmt.Errorf("token endpoint %s returned no access_token", redactURL(endpoint))
	}
	if tt := tok.TokenType; tt != "" && !strings.EqualFold(tt, "bearer") && !strings.EqualFold(tt, "N_A") {
		return nil, fmt.Errorf("token endpoint %s returned a token of type %q, not Bearer", redactURL(endpoint), tt)
	}
	t := &Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenEndpoint: endpoint}
	if s, ok := tok.Extra("scope").(string); ok {
		t.Scope = s
	}
	var secs float64
	switch v := tok.Extra("expires_in").(type) {
	case float64:
		secs = v
	case string:
		secs, _ = strconv.ParseFloat(v, 64)
	}
	if secs > 0 {
		t.Expiry = now.Add(time.Duration(secs) * time.Second)
	}
	return t, nil
}

// tokenError describes a token endpoint failure by status and OAuth error
// code only (the response body may echo what was sent).
func tokenError(endpoint string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		msg := fmt.Sprintf("token endpoint %s refused the request (HTTP %d", redactURL(endpoint), status)
		if re.ErrorCode != "" {
			msg += ", " + oneWord(re.ErrorCode)
		}
		return errors.New(msg + ")")
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("token endpoint %s did not answer in time", redactURL(endpoint))
	}
	return fmt.Errorf("token endpoint %s: %w", redactURL(endpoint), cleanErr(err))
}

// oneWord keeps an OAuth error code printable: at most 64 characters of
// [A-Za-z0-9_.-].
func oneWord(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 64 {
			break
		}
		if r == '_' || r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
