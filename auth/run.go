package auth

import (
	"context"
	"fmt"
)

// authorize runs discovery and the configured grant and keeps the token;
// a.mu is held throughout (single flight).
func (a *Authorizer) authorize(ctx context.Context, ch Challenge) error {
	tok, client, err := a.obtain(ctx, ch, a.Receiver, a.rec.Client, a.granted())
	if err != nil {
		return err
	}
	return a.commit(tok, client)
}

// granted is the current token's scope; a.mu is held.
func (a *Authorizer) granted() string {
	if a.rec.Token == nil {
		return ""
	}
	return a.rec.Token.Scope
}

// obtain runs discovery and the configured grant. It reads nothing of the
// record but what it is given, so it may run without a.mu (the headless
// flow, which waits for a person for minutes).
func (a *Authorizer) obtain(ctx context.Context, ch Challenge, rcv Receiver, stored *Client, granted string) (*Token, *Client, error) {
	if err := a.Settings.Check(); err != nil {
		return nil, nil, err
	}
	set, err := a.settings(ctx)
	if err != nil {
		return nil, nil, err
	}
	hc := a.httpClient()
	a.progress("discovering the authorization server")
	d, err := Discover(ctx, hc, a.URL, ch)
	if err != nil {
		return nil, nil, err
	}
	scope := chooseScope(ch, d, set.Scope, granted)
	a.flows.Add(1)
	var tok *Token
	var client *Client
	switch set.grant() {
	case GrantClientCredentials:
		a.progress("requesting a token (client credentials)")
		tok, err = clientCredentials(ctx, hc, d, set, scope, a.now())
	case GrantJWTBearer:
		a.progress("requesting a token (cross-app access)")
		tok, err = crossApp(ctx, hc, d, set, scope, a.now())
	default:
		a.progress("waiting for the authorization in the browser")
		tok, client, err = codeFlow(ctx, hc, rcv, d, set, stored, scope, a.now)
	}
	if err != nil {
		return nil, nil, err
	}
	if tok.Scope == "" {
		tok.Scope = scope // RFC 6749 §5.1: omitted means as requested
	}
	tok.Resource = d.Resource
	if client == nil {
		client = &Client{ID: a.Settings.ClientID, Issuer: d.Server.Issuer}
		if len(a.Settings.PrivateKeyPEM) > 0 {
			client.AuthMethod = AuthPrivateKeyJWT
		}
	}
	return tok, client, nil
}

// commit keeps a new token and its client; a.mu is held.
func (a *Authorizer) commit(tok *Token, client *Client) error {
	a.rec.Token, a.rec.Client = tok, client
	if err := a.save(); err != nil {
		return fmt.Errorf("the token could not be stored in the %s: %w", a.store().Name(), err)
	}
	a.progress("authorized")
	return nil
}
