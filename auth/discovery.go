package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ResourceMetadata is an RFC 9728 protected-resource metadata document.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// ServerMetadata is an RFC 8414 (or OpenID Connect discovery) document,
// the members this client uses.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
}

// Discovery is what discovery found for one resource.
type Discovery struct {
	// Resource is the RFC 8707 resource indicator to send (the PRM's
	// resource); empty on the 2025-03-26 path, which has no PRM.
	Resource string
	// ScopesSupported are the PRM's scopes_supported.
	ScopesSupported []string
	// Server is the authorization server's metadata (endpoints filled with
	// the 2025-03-26 defaults when it has none).
	Server ServerMetadata
	// Legacy marks the 2025-03-26 path (no PRM).
	Legacy bool
	// HasMetadata is false when the endpoints are the 2025-03-26 defaults.
	HasMetadata bool
}

// Discover finds the protected resource's metadata and its authorization
// server's, in the order of the MCP specification 2025-11-25: the PRM URL
// of the challenge, else the path-based well-known URL, else the root one;
// then the authorization server's RFC 8414 and OpenID Connect documents.
// With no PRM at all it takes the 2025-03-26 path: metadata at the
// server's origin root, else the default endpoints there.
func Discover(ctx context.Context, hc *http.Client, resourceURL string, ch Challenge) (*Discovery, error) {
	ru, err := url.Parse(resourceURL)
	if err != nil || !ru.IsAbs() {
		return nil, errors.New("the server URL is not absolute")
	}
	prm, err := findPRM(ctx, hc, ru, ch)
	if err != nil {
		return nil, err
	}
	if prm == nil {
		return legacyDiscovery(ctx, hc, ru)
	}
	d := &Discovery{Resource: prm.Resource, ScopesSupported: prm.ScopesSupported, HasMetadata: true}
	issuer := prm.AuthorizationServers[0]
	iu, err := checkEndpoint("authorization server", issuer)
	if err != nil {
		return nil, fmt.Errorf("protected resource metadata: %w", err)
	}
	for _, cand := range asMetadataURLs(iu) {
		var md ServerMetadata
		err := fetchJSON(ctx, hc, cand, &md)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("authorization server metadata: %w", err)
		}
		if strings.TrimSuffix(md.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("authorization server metadata at %s names issuer %q, not %q", redactURL(cand), md.Issuer, issuer)
		}
		if err := md.check(); err != nil {
			return nil, err
		}
		d.Server = md
		return d, nil
	}
	return nil, fmt.Errorf("authorization server %s publishes no metadata (RFC 8414 or OpenID Connect discovery)", redactURL(issuer))
}

// findPRM fetches the protected-resource metadata; nil when there is none.
func findPRM(ctx context.Context, hc *http.Client, ru *url.URL, ch Challenge) (*ResourceMetadata, error) {
	var cands []string
	if ch.ResourceMetadata != "" {
		mu, err := url.Parse(ch.ResourceMetadata)
		if err != nil || !mu.IsAbs() {
			return nil, errors.New("WWW-Authenticate resource_metadata is not an absolute URL")
		}
		if !sameOrigin(mu, ru) {
			return nil, fmt.Errorf("WWW-Authenticate resource_metadata %s is on another origin than the server", redactURL(ch.ResourceMetadata))
		}
		cands = append(cands, mu.String())
	} else {
		root := origin(ru) + "/.well-known/oauth-protected-resource"
		if p := strings.TrimSuffix(ru.EscapedPath(), "/"); p != "" {
			cands = append(cands, root+p)
		}
		cands = append(cands, root)
	}
	for _, c := range cands {
		var prm ResourceMetadata
		err := fetchJSON(ctx, hc, c, &prm)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("protected resource metadata: %w", err)
		}
		if err := prm.check(ru); err != nil {
			return nil, fmt.Errorf("protected resource metadata at %s: %w", redactURL(c), err)
		}
		return &prm, nil
	}
	if ch.ResourceMetadata != "" {
		return nil, fmt.Errorf("protected resource metadata %s is missing", redactURL(ch.ResourceMetadata))
	}
	return nil, nil
}

// check validates a PRM against the server URL: its resource must be on
// the server's origin and a path prefix of the server URL.
func (p *ResourceMetadata) check(ru *url.URL) error {
	if len(p.AuthorizationServers) == 0 {
		return errors.New("it names no authorization_servers")
	}
	if p.Resource == "" {
		p.Resource = ru.String()
		return nil
	}
	u, err := url.Parse(p.Resource)
	if err != nil || !u.IsAbs() || u.Fragment != "" {
		return errors.New("its resource is not an absolute URL without fragment")
	}
	rp, sp := strings.TrimSuffix(u.Path, "/"), strings.TrimSuffix(ru.Path, "/")
	if !sameOrigin(u, ru) || (rp != sp && !strings.HasPrefix(sp, rp+"/")) {
		return fmt.Errorf("its resource %s does not cover the server URL", redactURL(p.Resource))
	}
	return nil
}

// asMetadataURLs lists the authorization-server metadata URLs to try, in
// the specification's order. An issuer with a path never falls back to the
// root documents.
func asMetadataURLs(iu *url.URL) []string {
	o := origin(iu)
	p := strings.TrimSuffix(iu.EscapedPath(), "/")
	if p == "" {
		return []string{o + "/.well-known/oauth-authorization-server", o + "/.well-known/openid-configuration"}
	}
	return []string{
		o + "/.well-known/oauth-authorization-server" + p,
		o + "/.well-known/openid-configuration" + p,
		o + p + "/.well-known/openid-configuration",
	}
}

// legacyDiscovery is the 2025-03-26 path: the authorization server is the
// MCP server's origin; its metadata is at the origin root, else the
// default endpoints apply.
func legacyDiscovery(ctx context.Context, hc *http.Client, ru *url.URL) (*Discovery, error) {
	o := origin(ru)
	if _, err := checkEndpoint("server URL", o); err != nil {
		return nil, err
	}
	d := &Discovery{Legacy: true}
	var md ServerMetadata
	err := fetchJSON(ctx, hc, o+"/.well-known/oauth-authorization-server", &md)
	switch {
	case err == nil:
		// The 2025-03-26 servers' issuer need not match the root (RFC 8414
		// §3.3 is not applied on this path).
		if err := md.check(); err != nil {
			return nil, err
		}
		d.Server, d.HasMetadata = md, true
	case errors.Is(err, errNotFound):
		d.Server = ServerMetadata{Issuer: o, AuthorizationEndpoint: o + "/authorize", TokenEndpoint: o + "/token", RegistrationEndpoint: o + "/register"}
	default:
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	return d, nil
}

// check validates the endpoints of authorization-server metadata.
func (m *ServerMetadata) check() error {
	if m.TokenEndpoint == "" {
		return errors.New("authorization server metadata has no token_endpoint")
	}
	for _, f := range []struct{ name, v string }{
		{"authorization_endpoint", m.AuthorizationEndpoint}, {"token_endpoint", m.TokenEndpoint}, {"registration_endpoint", m.RegistrationEndpoint},
	} {
		if f.v == "" {
			continue
		}
		if _, err := checkEndpoint("authorization server metadata "+f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// supportsS256 reports whether PKCE S256 may be used: advertised, or (on
// the 2025-03-26 path, where metadata may predate the field) not denied.
func (d *Discovery) supportsS256() bool {
	if len(d.Server.CodeChallengeMethodsSupported) == 0 {
		return d.Legacy
	}
	return slices.Contains(d.Server.CodeChallengeMethodsSupported, "S256")
}
