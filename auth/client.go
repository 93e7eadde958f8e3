package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
)

// Token endpoint authentication methods.
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// Client is an OAuth client of one authorization server. Secret is secret;
// String never prints it.
type Client struct {
	ID          string `json:"client_id"`
	Secret      string `json:"client_secret,omitempty"`
	AuthMethod  string `json:"token_endpoint_auth_method,omitempty"`
	RedirectURI string `json:"redirect_uri,omitempty"`
	// Issuer is the authorization server the client belongs to.
	Issuer string `json:"issuer,omitempty"`
	// Registered marks a client from dynamic registration (kept in the
	// store and reused with the same authorization server).
	Registered bool `json:"registered,omitempty"`
}

// String names the method only.
func (c Client) String() string { return "auth.Client{" + c.AuthMethod + "}" }

// GoString redacts like String.
func (c Client) GoString() string { return c.String() }

// chooseClient picks the client in the specification's order: the
// pre-registered one of the settings; else a client ID metadata document
// when the server supports it; else a stored registration with this
// server; else dynamic registration; else an error asking for a client id.
func chooseClient(ctx context.Context, hc *http.Client, d *Discovery, s Settings, stored *Client, redirectURI string) (*Client, error) {
	md := d.Server
	switch {
	case s.ClientID != "":
		c := &Client{ID: s.ClientID, Secret: s.ClientSecret, RedirectURI: redirectURI, Issuer: md.Issuer}
		switch {
		case len(s.PrivateKeyPEM) > 0:
			c.AuthMethod = AuthPrivateKeyJWT
		case s.ClientSecret == "":
			c.AuthMethod = AuthNone
		case slices.Contains(md.TokenEndpointAuthMethodsSupported, AuthClientSecretPost) &&
			!slices.Contains(md.TokenEndpointAuthMethodsSupported, AuthClientSecretBasic):
			c.AuthMethod = AuthClientSecretPost
		default:
			c.AuthMethod = AuthClientSecretBasic
		}
		return c, nil
	case s.ClientMetadataURL != "" && md.ClientIDMetadataDocumentSupported:
		return &Client{ID: s.ClientMetadataURL, AuthMethod: AuthNone, RedirectURI: redirectURI, Issuer: md.Issuer}, nil
	case stored != nil && stored.Registered && stored.Issuer == md.Issuer && stored.RedirectURI == redirectURI:
		return stored, nil
	case md.RegistrationEndpoint != "":
		return register(ctx, hc, md, s, redirectURI)
	}
	return nil, errors.New("the authorization server offers no dynamic client registration; configure a client id (oauth.clientId or --oauth-client-id)")
}

// registration is an RFC 7591 client registration request.
type registration struct {
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope,omitempty"`
}

// register runs dynamic client registration (RFC 7591).
func register(ctx context.Context, hc *http.Client, md ServerMetadata, s Settings, redirectURI string) (*Client, error) {
	method := AuthNone
	if sup := md.TokenEndpointAuthMethodsSupported; len(sup) > 0 && !slices.Contains(sup, AuthNone) {
		for _, m := range []string{AuthClientSecretBasic, AuthClientSecretPost} {
			if slices.Contains(sup, m) {
				method = m
				break
			}
		}
	}
	name := s.ClientName
	if name == "" {
		name = "mcprt"
	}
	body, _ := json.Marshal(registration{
		ClientName: name, ClientURI: s.ClientURI, RedirectURIs: []string{redirectURI},
		GrantTypes: []string{GrantAuthorizationCode, "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: method,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, md.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("bad registration endpoint")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("dynamic client registration at %s: %w", redactURL(md.RegistrationEndpoint), cleanErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxMetadata))
		return nil, fmt.Errorf("dynamic client registration at %s answered HTTP %d", redactURL(md.RegistrationEndpoint), resp.StatusCode)
	}
	var c Client
	if err := decodeCapped(resp.Body, md.RegistrationEndpoint, &c); err != nil {
		return nil, fmt.Errorf("dynamic client registration: %w", err)
	}
	if c.ID == "" {
		return nil, errors.New("dynamic client registration returned no client_id")
	}
	if c.AuthMethod == "" {
		c.AuthMethod = method
		if c.Secret != "" && method == AuthNone {
			c.AuthMethod = AuthClientSecretBasic
		}
	}
	c.RedirectURI, c.Issuer, c.Registered = redirectURI, md.Issuer, true
	return &c, nil
}
