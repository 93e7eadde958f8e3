package auth

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Grant types a Settings may ask for.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer is cross-app access (SEP-990): an ID token from the
	// enterprise IdP is exchanged for an ID-JAG there, then presented to
	// the authorization server as a jwt-bearer assertion.
	GrantJWTBearer = "jwt-bearer"
)

// Settings is what the user said about a server's authorization: the
// config file's oauth block or the CLI's --oauth-* flags. Several fields
// are secrets; Settings never prints them (String).
type Settings struct {
	// Grant is GrantAuthorizationCode (the default when empty),
	// GrantClientCredentials or GrantJWTBearer.
	Grant string
	// ClientID and ClientSecret name a pre-registered client.
	ClientID     string
	ClientSecret string
	// ClientSecretCommand, when set, is a command whose output is the
	// client secret, run (through Authorizer.Secrets) each time the
	// client authenticates; the configuration's "!command" values.
	ClientSecretCommand string
	// Scope is requested when the server's challenge names none.
	Scope string
	// RedirectURI is the exact loopback redirect URI of a pre-registered
	// client; empty picks a free port.
	RedirectURI string
	// ClientName and ClientURI are advertised in dynamic registration.
	ClientName string
	ClientURI  string
	// ClientMetadataURL is a client ID metadata document URL, used as the
	// client id when the authorization server supports it.
	ClientMetadataURL string
	// PrivateKeyPEM and SigningAlg authenticate with private_key_jwt.
	PrivateKeyPEM []byte
	SigningAlg    string
	// IDPTokenEndpoint, IDPClientID and IDPIDToken drive cross-app access.
	IDPTokenEndpoint string
	IDPClientID      string
	IDPIDToken       string
	// Timeout bounds one authorization's HTTP traffic (token endpoint,
	// metadata, registration); zero means 30 s. The browser step is not
	// bounded by it.
	Timeout time.Duration
}

// String names the grant and which fields are set, never their values.
func (s Settings) String() string {
	return fmt.Sprintf("auth.Settings{grant %s, client id set %t, secret set %t, key set %t}",
		s.grant(), s.ClientID != "", s.ClientSecret != "" || s.ClientSecretCommand != "", len(s.PrivateKeyPEM) > 0)
}

// GoString redacts like String.
func (s Settings) GoString() string { return s.String() }

func (s Settings) grant() string {
	if s.Grant == "" {
		return GrantAuthorizationCode
	}
	return s.Grant
}

// Check reports what is missing or wrong in s, without values.
func (s Settings) Check() error {
	switch s.grant() {
	case GrantAuthorizationCode:
	case GrantClientCredentials:
		if s.ClientID == "" {
			return errors.New("the client_credentials grant needs a client id")
		}
		if s.ClientSecret == "" && s.ClientSecretCommand == "" && len(s.PrivateKeyPEM) == 0 {
			return errors.New("the client_credentials grant needs a client secret or a private key")
		}
	case GrantJWTBearer:
		if s.ClientID == "" || s.IDPTokenEndpoint == "" || s.IDPIDToken == "" {
			return errors.New("the jwt-bearer grant needs a client id, an IdP token endpoint and an IdP ID token")
		}
		if _, err := checkEndpoint("IdP token endpoint", s.IDPTokenEndpoint); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown grant %q (authorization_code, client_credentials or jwt-bearer)", s.Grant)
	}
	if len(s.PrivateKeyPEM) > 0 {
		if _, _, err := parseSigningKey(s.PrivateKeyPEM, s.SigningAlg); err != nil {
			return err
		}
	}
	if s.RedirectURI != "" {
		u, err := url.Parse(s.RedirectURI)
		if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) {
			return errors.New("the redirect URI must be an http URL on localhost or a loopback address")
		}
	}
	if s.ClientMetadataURL != "" {
		u, err := url.Parse(s.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
			return errors.New("the client metadata URL must be an https URL with a path")
		}
	}
	return nil
}
