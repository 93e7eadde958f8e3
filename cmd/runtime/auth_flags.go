package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/auth"
)

// oauthFlags are the --oauth-* flags: everything the configuration can say
// about authorization, for an ad-hoc --url server, plus how the person's
// step and the token store work for every server.
type oauthFlags struct {
	clientID, clientSecret, grant         string
	privateKeyFile, signingAlg            string
	clientMetadataURL, scope, redirectURI string
	idpTokenEndpoint, idpClientID         string
	idpIDTokenFile                        string
	redirect                              string
	store, storeFile                      string
	noBrowser                             bool
}

// secretEnv may hold the client secret instead of --oauth-client-secret
// (argv is visible to other users of the machine).
const secretEnv = "MCPRT_OAUTH_CLIENT_SECRET"

// passphraseEnv holds the passphrase of --oauth-store file.
const passphraseEnv = "MCPRT_OAUTH_PASSPHRASE"

func addOAuthFlags(root *cobra.Command, o *oauthFlags) {
	f := root.PersistentFlags()
	f.StringVar(&o.clientID, "oauth-client-id", "", "ad-hoc server: pre-registered OAuth client id")
	f.StringVar(&o.clientSecret, "oauth-client-secret", "", "ad-hoc server: OAuth client secret (prefer $"+secretEnv+")")
	f.StringVar(&o.grant, "oauth-grant", "", "ad-hoc server: authorization_code (default), client_credentials or jwt-bearer")
	f.StringVar(&o.privateKeyFile, "oauth-private-key-file", "", "ad-hoc server: PEM private key for private_key_jwt")
	f.StringVar(&o.signingAlg, "oauth-signing-alg", "", "ad-hoc server: JWS algorithm of the private key (e.g. ES256)")
	f.StringVar(&o.clientMetadataURL, "oauth-client-metadata-url", "", "ad-hoc server: client ID metadata document URL (used when the server supports it)")
	f.StringVar(&o.scope, "oauth-scope", "", "ad-hoc server: scope to request when the server names none")
	f.StringVar(&o.redirectURI, "oauth-redirect-uri", "", "ad-hoc server: exact loopback redirect URI of a pre-registered client")
	f.StringVar(&o.idpTokenEndpoint, "oauth-idp-token-endpoint", "", "ad-hoc server, cross-app access: the IdP's token endpoint")
	f.StringVar(&o.idpClientID, "oauth-idp-client-id", "", "ad-hoc server, cross-app access: the client id at the IdP")
	f.StringVar(&o.idpIDTokenFile, "oauth-idp-id-token-file", "", "ad-hoc server, cross-app access: file holding the IdP ID token")
	f.StringVar(&o.redirect, "oauth-redirect", "browser", "browser: a person approves in a browser; auto: follow the authorization URL's redirects (servers that approve at once)")
	f.StringVar(&o.store, "oauth-store", "", "token store: keyring (default), memory (this process only) or file (--oauth-store-file, passphrase in $"+passphraseEnv+"); ad-hoc servers default to memory")
	f.StringVar(&o.storeFile, "oauth-store-file", "", "the encrypted token file of --oauth-store file")
	f.BoolVar(&o.noBrowser, "no-browser", false, "print the authorization URL instead of opening a browser")
}

// adhocSettings reads the flags that describe the ad-hoc server's client.
func (o *oauthFlags) adhocSettings() (auth.Settings, bool, error) {
	s := auth.Settings{Grant: o.grant, ClientID: o.clientID, ClientSecret: o.clientSecret, SigningAlg: o.signingAlg,
		ClientMetadataURL: o.clientMetadataURL, Scope: o.scope, RedirectURI: o.redirectURI,
		IDPTokenEndpoint: o.idpTokenEndpoint, IDPClientID: o.idpClientID}
	if s.ClientSecret == "" {
		s.ClientSecret = os.Getenv(secretEnv)
	}
	if o.privateKeyFile != "" {
		b, err := os.ReadFile(o.privateKeyFile)
		if err != nil {
			return s, true, usage("--oauth-private-key-file: cannot read the file")
		}
		s.PrivateKeyPEM = b
	}
	if o.idpIDTokenFile != "" {
		b, err := os.ReadFile(o.idpIDTokenFile)
		if err != nil {
			return s, true, usage("--oauth-idp-id-token-file: cannot read the file")
		}
		s.IDPIDToken = strings.TrimSpace(string(b))
	}
	set := s.Grant != "" || s.ClientID != "" || o.clientSecret != "" || len(s.PrivateKeyPEM) > 0 || s.SigningAlg != "" ||
		s.ClientMetadataURL != "" || s.Scope != "" || s.RedirectURI != "" || s.IDPTokenEndpoint != "" || s.IDPClientID != "" ||
		s.IDPIDToken != "" || o.redirect == "auto"
	if set {
		if err := s.Check(); err != nil {
			return s, true, usage("--oauth-*: %s", err.Error())
		}
	}
	return s, set, nil
}

// apply puts the flags into the runtime's options.
func (o *oauthFlags) apply(opts *mcprt.Options, adhocURL string, stderr func(string)) error {
	s, set, err := o.adhocSettings()
	if err != nil {
		return err
	}
	if set && adhocURL == "" {
		return usage("the --oauth-* client flags describe an ad-hoc --url server; put a configured server's in its oauth block")
	}
	store := o.store
	if set && store == "" {
		store = "memory" // an ad-hoc server's tokens live as long as the process
	}
	switch store {
	case "", "keyring":
	case "memory":
		opts.Auth.Store = &auth.MemoryStore{}
	case "file":
		if o.storeFile == "" || os.Getenv(passphraseEnv) == "" {
			return usage("--oauth-store file needs --oauth-store-file and a passphrase in $%s", passphraseEnv)
		}
		opts.Auth.Store = &auth.FileStore{Path: o.storeFile, Passphrase: os.Getenv(passphraseEnv)}
	default:
		return usage("--oauth-store must be keyring, memory or file")
	}
	switch o.redirect {
	case "auto":
		opts.Auth.Receiver = auth.AutoRedirect{}
	case "browser", "":
		opts.Auth.Receiver = auth.Loopback{Show: func(u string) error { return o.show(u, stderr) }}
	default:
		return usage("--oauth-redirect must be browser or auto")
	}
	if set {
		opts.Auth.Settings = map[string]auth.Settings{adhoc: s}
	}
	return nil
}

// show presents the authorization URL: printed always, and opened in the
// browser unless --no-browser.
func (o *oauthFlags) show(u string, stderr func(string)) error {
	stderr("runtime: open this URL to authorize (waiting for the browser to come back):\n  " + u)
	if o.noBrowser {
		return nil
	}
	if err := openBrowser(u); err != nil {
		stderr("runtime: could not open a browser (" + err.Error() + "); open the URL above by hand")
	}
	return nil
}

// openBrowser starts the system's URL opener without waiting for it.
func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		if _, err := exec.LookPath("xdg-open"); err != nil {
			return errors.New("no xdg-open")
		}
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s did not start", cmd.Path)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
