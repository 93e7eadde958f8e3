package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Receiver carries the person's step of an authorization-code flow: it
// picks the redirect URI and brings back the redirect's query.
type Receiver interface {
	// Open prepares one flow. preferred, when set, is the exact redirect
	// URI to use (a pre-registered client's, or a registered one's).
	Open(preferred string) (Pending, error)
}

// Pending is one flow's redirect in waiting.
type Pending interface {
	// RedirectURI is the redirect URI of this flow.
	RedirectURI() string
	// Await sends the user agent to authURL and returns the query of the
	// redirect back to RedirectURI.
	Await(ctx context.Context, authURL string) (url.Values, error)
	// Close releases what Open took (a listening socket).
	Close()
}

// defaultAutoRedirect is the redirect URI of AutoRedirect when none is
// configured; nothing listens there, the redirect is read, not followed.
const defaultAutoRedirect = "http://127.0.0.1:33418/callback"

// AutoRedirect completes the flow without a person, for authorization
// servers that approve at once: it fetches the authorization URL itself,
// follows its redirects (https, or http on loopback) and takes the query
// of the one that points at the redirect URI, without following that one.
type AutoRedirect struct {
	// Transport carries the requests; nil uses http.DefaultTransport.
	Transport http.RoundTripper
}

// Open implements Receiver.
func (a AutoRedirect) Open(preferred string) (Pending, error) {
	if preferred == "" {
		preferred = defaultAutoRedirect
	}
	return &autoPending{tr: a.Transport, redirect: preferred}, nil
}

type autoPending struct {
	tr       http.RoundTripper
	redirect string
}

func (p *autoPending) RedirectURI() string { return p.redirect }
func (p *autoPending) Close()              {}

func (p *autoPending) Await(ctx context.Context, authURL string) (url.Values, error) {
	target, _ := url.Parse(p.redirect)
	var back *url.URL
	hc := &http.Client{Transport: p.tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if matchesRedirect(req.URL, target) {
			back = req.URL
			return http.ErrUseLastResponse
		}
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		_, err := checkEndpoint("authorization redirect", req.URL.String())
		return err
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, errors.New("bad authorization URL")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authorization request: %w", cleanErr(err))
	}
	resp.Body.Close()
	if back == nil {
		return nil, fmt.Errorf("the authorization endpoint did not redirect back to the client (HTTP %d); it may need a person: use a browser login", resp.StatusCode)
	}
	return back.Query(), nil
}

// matchesRedirect compares scheme, host and path (not the query).
func matchesRedirect(u, target *url.URL) bool {
	return strings.EqualFold(u.Scheme, target.Scheme) && strings.EqualFold(u.Host, target.Host) && u.Path == target.Path
}

// Loopback receives the redirect on a listener at 127.0.0.1 (RFC 8252):
// the port of the preferred redirect URI, else a free one.
type Loopback struct {
	// Show presents the authorization URL to the person: open a browser,
	// or print it. It must not block.
	Show func(authURL string) error
}

// Open implements Receiver: it binds the listener now, so the redirect URI
// (with its port) is known before the client is chosen.
func (l Loopback) Open(preferred string) (Pending, error) {
	addr, path, redirect := "127.0.0.1:0", "/callback", ""
	if preferred != "" {
		u, err := url.Parse(preferred)
		if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) || u.Port() == "" {
			return nil, errors.New("the redirect URI must be http on a loopback host with a port")
		}
		addr, path, redirect = net.JoinHostPort("127.0.0.1", u.Port()), u.Path, preferred
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for the redirect on %s: %w", addr, err)
	}
	if redirect == "" {
		redirect = "http://127.0.0.1:" + fmt.Sprint(ln.Addr().(*net.TCPAddr).Port) + path
	}
	return &loopPending{ln: ln, path: path, redirect: redirect, show: l.Show, got: make(chan url.Values, 1)}, nil
}

type loopPending struct {
	ln       net.Listener
	path     string
	redirect string
	show     func(string) error
	got      chan url.Values
	srv      *http.Server
	done     chan struct{}
}

func (p *loopPending) RedirectURI() string { return p.redirect }

func (p *loopPending) Await(ctx context.Context, authURL string) (url.Values, error) {
	mux := http.NewServeMux()
	mux.HandleFunc(p.path, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code") == "" && q.Get("error") == "" {
			http.Error(w, "not an authorization response", http.StatusBadRequest)
			return
		}
		select {
		case p.got <- q:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte("Authorization received. You can close this window and return to the terminal.\n"))
		default:
			http.Error(w, "this authorization flow is already complete", http.StatusConflict)
		}
	})
	p.srv = &http.Server{Handler: mux}
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(p.ln)
	}()
	if p.show != nil {
		if err := p.show(authURL); err != nil {
			return nil, err
		}
	}
	select {
	case q := <-p.got:
		return q, nil
	case <-ctx.Done():
		return nil, errors.New("gave up waiting for the browser to come back")
	}
}

func (p *loopPending) Close() {
	if p.srv != nil {
		_ = p.srv.Close()
		<-p.done
		return
	}
	_ = p.ln.Close()
}
