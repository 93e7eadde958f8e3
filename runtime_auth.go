package mcprt

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/mcprt/mcprt/auth"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// AuthOptions configure OAuth for remote servers: those with auth "oauth"
// or an oauth block in the configuration, and those named in Settings.
type AuthOptions struct {
	// Store keeps tokens. nil is the OS credential store (Keychain, Secret
	// Service, Credential Manager); when it is unavailable, authorization
	// fails closed with a message naming the alternatives (an
	// auth.FileStore or an auth.MemoryStore chosen here).
	Store auth.Store
	// Receiver carries the person's step of the authorization-code flow.
	// nil listens on 127.0.0.1 and shows the authorization URL as a notice
	// to the host.
	Receiver auth.Receiver
	// Interactive starts an authorization on a server's 401 (as
	// settings.autoAuth does) instead of asking for a login.
	Interactive bool
	// Settings replace the configuration's oauth block of the servers they
	// name (the CLI's --oauth-* flags for an ad-hoc server); a server named
	// here uses OAuth even without an oauth block.
	Settings map[string]auth.Settings
}

// buildAuthorizers makes one Authorizer per OAuth server.
func buildAuthorizers(eff *config.Effective, opts Options, host *hostCalls, secrets func(ctx context.Context, server, field, value string) (string, error)) map[string]*auth.Authorizer {
	out := map[string]*auth.Authorizer{}
	store := opts.Auth.Store
	if store == nil {
		store = auth.KeyringStore{}
	}
	rcv := opts.Auth.Receiver
	for _, s := range eff.Servers {
		set, named := opts.Auth.Settings[s.Name]
		if !named && s.OAuth == nil && s.Auth != "oauth" {
			continue
		}
		if !named && s.OAuth != nil {
			set = SettingsFromConfig(*s.OAuth)
		}
		ep := s.Endpoint()
		if ep.URL == "" {
			continue
		}
		name := s.Name
		notify := func(msg string) {
			host.notify(context.Background(), messages.Notice{Level: messages.NoticeInfo, Server: name, Text: "authorization: " + msg})
		}
		r := rcv
		if r == nil {
			r = auth.Loopback{Show: func(u string) error {
				notify("open this URL in a browser to authorize: " + u)
				return nil
			}}
		}
		out[s.Name] = &auth.Authorizer{
			Server: s.Name, URL: ep.URL, Settings: set, Store: store, Receiver: r,
			Interactive: opts.Auth.Interactive || eff.Settings.AutoAuth || named,
			Clock:       opts.sim().Clock, Progress: notify,
		}
		if secrets != nil {
			out[s.Name].Secrets = func(ctx context.Context, field, value string) (string, error) {
				return secrets(ctx, name, field, value)
			}
		}
	}
	return out
}

// SettingsFromConfig converts a configuration oauth block. A clientSecret
// written "!!value" is the literal "!value"; "!command" is run each time
// the client authenticates (through the dialer's secret runner).
func SettingsFromConfig(o config.OAuth) auth.Settings {
	secret, command := o.ClientSecret, ""
	switch {
	case strings.HasPrefix(secret, "!!"):
		secret = secret[1:]
	case strings.HasPrefix(secret, "!"):
		secret, command = "", secret[1:]
	}
	return auth.Settings{
		Grant: o.GrantType, ClientID: o.ClientID, ClientSecret: secret, ClientSecretCommand: command, Scope: o.Scope,
		RedirectURI: o.RedirectURI, ClientName: o.ClientName, ClientURI: o.ClientURI,
	}
}

// httpAuth is the transports' authorization hook.
func (rt *Runtime) httpAuth(server string) func(http.RoundTripper) http.RoundTripper {
	a := rt.authorizers[server]
	if a == nil {
		return nil
	}
	return a.Wrap
}

// Authorizer returns the OAuth authorizer of a server (for login, status
// and logout), or nil when the server does not use OAuth.
func (rt *Runtime) Authorizer(server string) *auth.Authorizer { return rt.authorizers[server] }

// AuthServers lists the servers that use OAuth.
func (rt *Runtime) AuthServers() []string {
	var out []string
	for name := range rt.authorizers {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// authActions gives the mcp tool's auth-start and auth-complete to the
// servers' authorizers.
type authActions struct{ rt *Runtime }

func (x authActions) authorizer(server string) (*auth.Authorizer, *messages.Error) {
	a := x.rt.authorizers[server]
	if a == nil {
		return nil, messages.Errorf(messages.KindInvalidArgs, server, "server does not use OAuth (set auth \"oauth\" or an oauth block)")
	}
	return a, nil
}

// Start implements tools.AuthActions.
func (x authActions) Start(ctx context.Context, server string) (string, *messages.Error) {
	a, e := x.authorizer(server)
	if e != nil {
		return "", e
	}
	u, err := a.StartHeadless(ctx)
	if err != nil {
		return "", authError(server, err)
	}
	return u, nil
}

// Complete implements tools.AuthActions. On success the server is
// connected at once with the new token.
func (x authActions) Complete(ctx context.Context, server, pasted string) *messages.Error {
	a, e := x.authorizer(server)
	if e != nil {
		return e
	}
	if err := a.CompleteHeadless(ctx, pasted); err != nil {
		return authError(server, err)
	}
	// Forget the remembered auth_required failure: connect with the token.
	if _, err := x.rt.Connect(ctx, server, true); err != nil {
		return authError(server, err)
	}
	return nil
}

func authError(server string, err error) *messages.Error {
	var me *messages.Error
	if errors.As(err, &me) {
		return me
	}
	return &messages.Error{Kind: messages.KindAuthRequired, Server: server, Message: err.Error()}
}
