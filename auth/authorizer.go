package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// defaultTimeout bounds one authorization's HTTP traffic.
const defaultTimeout = 30 * time.Second

// Authorizer authorizes one server: it keeps the server's token (in
// memory and in its Store, bound to URL), renews it, and runs discovery
// and a grant when the server challenges. See the package doc for the
// concurrency contract.
type Authorizer struct {
	// Server names the server (the store key and the name in errors).
	Server string
	// URL is the server's URL: the resource a token is for. A token stored
	// for another URL is ignored.
	URL string
	// Settings is the user's configuration.
	Settings Settings
	// Store keeps tokens; nil uses a process-lifetime MemoryStore.
	Store Store
	// Receiver carries the person's step; nil refuses the
	// authorization-code flow (only stored tokens and machine grants).
	Receiver Receiver
	// Interactive allows starting a flow on a challenge (autoAuth, an
	// ad-hoc server given --oauth-* flags). When false, a challenge with no
	// usable token is an error asking the user to log in.
	Interactive bool
	// Clock supplies "now" (token expiry, assertions); nil is the real clock.
	Clock clock.Clock
	// Transport carries authorization traffic (metadata, registration,
	// token endpoint); nil uses http.DefaultTransport.
	Transport http.RoundTripper
	// Progress, when set, hears what the flow is doing (never secrets).
	Progress func(msg string)
	// Secrets resolves Settings.ClientSecretCommand (given as "!command")
	// when the client authenticates; nil refuses such settings.
	Secrets func(ctx context.Context, field, value string) (string, error)

	mu     sync.Mutex
	loaded bool
	rec    Record
	flows  atomic.Int32

	hmu      sync.Mutex
	headless *headlessFlow // guarded by hmu: the auth-start flow waiting for auth-complete
}

func (a *Authorizer) now() time.Time { return clock.Or(a.Clock).Now() }

func (a *Authorizer) store() Store {
	if a.Store == nil {
		a.Store = &MemoryStore{}
	}
	return a.Store
}

func (a *Authorizer) httpClient() *http.Client {
	hc := authHTTPClient(a.Transport)
	hc.Timeout = a.Settings.Timeout
	if hc.Timeout <= 0 {
		hc.Timeout = defaultTimeout
	}
	return hc
}

func (a *Authorizer) progress(format string, args ...any) {
	if a.Progress != nil {
		a.Progress(fmt.Sprintf(format, args...))
	}
}

// fail wraps err as the server's authorization failure.
func (a *Authorizer) fail(err error) error {
	return &Error{Server: a.Server, Err: err}
}

// Error is an authorization failure of one server. Its text names the
// server and the step, never a secret.
type Error struct {
	Server string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("authorization for %s failed: %v", e.Server, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// As lets errors.As see the failure as the runtime's auth_required error,
// which is how it crosses the transports (they know nothing of auth).
func (e *Error) As(target any) bool {
	m, ok := target.(**messages.Error)
	if ok {
		*m = &messages.Error{Kind: messages.KindAuthRequired, Server: e.Server, Message: "authorization failed: " + e.Err.Error()}
	}
	return ok
}

// load reads the stored record once; a.mu is held.
func (a *Authorizer) load() error {
	if a.loaded {
		return nil
	}
	r, err := a.store().Load(a.Server)
	if err != nil {
		return err
	}
	a.loaded = true
	if r != nil && r.URL == a.URL {
		a.rec = *r
	}
	a.rec.URL = a.URL
	return nil
}

// save writes the record; a pre-registered client's secret is not stored
// (it comes from the settings each time). a.mu is held.
func (a *Authorizer) save() error {
	r := a.rec
	if r.Client != nil && !r.Client.Registered {
		c := *r.Client
		c.Secret = ""
		r.Client = &c
	}
	return a.store().Save(a.Server, &r)
}

// client is the stored client with the settings' secret restored.
func (a *Authorizer) client(s Settings) Client {
	if a.rec.Client == nil {
		return Client{ID: s.ClientID, Secret: s.ClientSecret, AuthMethod: AuthNone}
	}
	c := *a.rec.Client
	if !c.Registered && c.ID == s.ClientID {
		c.Secret = s.ClientSecret
	}
	return c
}

// settings returns the settings with the client secret's command run.
func (a *Authorizer) settings(ctx context.Context) (Settings, error) {
	s := a.Settings
	if s.ClientSecretCommand == "" {
		return s, nil
	}
	if a.Secrets == nil {
		return s, errors.New("the client secret is a command, and nothing here may run it")
	}
	v, err := a.Secrets(ctx, "oauth.clientSecret", "!"+s.ClientSecretCommand)
	if err != nil {
		return s, err
	}
	s.ClientSecret, s.ClientSecretCommand = v, ""
	return s, nil
}

// Current returns the access token to send, refreshing it first when it
// expires within a minute; "" when there is none.
func (a *Authorizer) Current(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.load(); err != nil {
		return "", a.fail(err)
	}
	t := a.rec.Token
	if t == nil {
		return "", nil
	}
	if t.expiresSoon(a.now()) {
		if t.RefreshToken == "" || a.tryRefresh(ctx) != nil {
			return "", nil // expired: the server's challenge starts a flow
		}
	}
	return a.rec.Token.AccessToken, nil
}

// tryRefresh redeems the refresh token; a.mu is held.
func (a *Authorizer) tryRefresh(ctx context.Context) error {
	t := a.rec.Token
	if t == nil || t.RefreshToken == "" || t.TokenEndpoint == "" {
		return errors.New("no refresh token")
	}
	a.progress("refreshing the access token")
	issuer := ""
	if a.rec.Client != nil {
		issuer = a.rec.Client.Issuer
	}
	s, err := a.settings(ctx)
	if err != nil {
		return err
	}
	nt, err := refresh(ctx, a.httpClient(), t, a.client(s), s, issuer, a.now())
	if err != nil {
		a.rec.Token.RefreshToken = "" // do not try it again
		_ = a.save()
		return err
	}
	a.rec.Token = nt
	return a.save()
}

// Renew answers a challenge to a request sent with token used: if another
// flow already replaced that token, its successor is returned; a 401 tries
// the refresh token; otherwise (and for a step-up) a full authorization
// runs, when Interactive or a machine grant allows it.
func (a *Authorizer) Renew(ctx context.Context, ch Challenge, used string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.load(); err != nil {
		return "", a.fail(err)
	}
	if t := a.rec.Token; t != nil && t.AccessToken != used {
		return t.AccessToken, nil
	}
	if ch.Status == http.StatusUnauthorized && a.rec.Token != nil && a.rec.Token.RefreshToken != "" {
		if a.tryRefresh(ctx) == nil {
			return a.rec.Token.AccessToken, nil
		}
	}
	if !a.Interactive && a.Settings.grant() == GrantAuthorizationCode {
		return "", a.fail(fmt.Errorf("the server asks for authorization; run: runtime auth login %s", a.Server))
	}
	if err := a.authorize(ctx, ch); err != nil {
		return "", a.fail(err)
	}
	return a.rec.Token.AccessToken, nil
}

// Login runs a full authorization now (runtime auth login), with the
// challenge of an unauthenticated probe when one is given.
func (a *Authorizer) Login(ctx context.Context, ch Challenge) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	if err := a.authorize(ctx, ch); err != nil {
		return a.fail(err)
	}
	return nil
}

// Flows counts the authorizations run (for status and tests).
func (a *Authorizer) Flows() int { return int(a.flows.Load()) }

// Granted returns the granted scope of the current token.
func (a *Authorizer) Granted() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Token == nil {
		return ""
	}
	return a.rec.Token.Scope
}

// Status describes the stored authorization without secrets.
type Status struct {
	Authorized  bool      `json:"authorized"`
	Scope       string    `json:"scope,omitempty"`
	Expiry      time.Time `json:"expiry,omitzero"`
	Refreshable bool      `json:"refreshable"`
	Store       string    `json:"store"`
}

// Status reads the stored record.
func (a *Authorizer) Status() (Status, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.load(); err != nil {
		return Status{Store: a.store().Name()}, a.fail(err)
	}
	s := Status{Store: a.store().Name()}
	if t := a.rec.Token; t != nil {
		s.Authorized, s.Scope, s.Expiry, s.Refreshable = true, t.Scope, t.Expiry, t.RefreshToken != ""
	}
	return s, nil
}

// Logout forgets the server's token and registration, here and in the store.
func (a *Authorizer) Logout() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rec, a.loaded = Record{URL: a.URL}, true
	if err := a.store().Delete(a.Server); err != nil {
		return a.fail(err)
	}
	return nil
}

// resourceURL parses URL.
func (a *Authorizer) resourceURL() (*url.URL, error) { return url.Parse(a.URL) }
