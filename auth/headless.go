package auth

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// HeadlessWait bounds how long an auth-start flow waits for auth-complete.
const HeadlessWait = 10 * time.Minute

// headlessFlow is an authorization-code flow split in two calls, for an
// agent whose person is elsewhere: StartHeadless returns the URL to open,
// CompleteHeadless takes the redirect URL (or the code) pasted back.
type headlessFlow struct {
	urls   chan string     // the authorization URL, once
	input  chan url.Values // the pasted redirect's query, once
	done   chan error      // the flow's outcome, once
	cancel context.CancelFunc
}

// StartHeadless begins an authorization-code flow whose redirect is pasted
// back later (CompleteHeadless) and returns the URL the person must open.
// The flow does not hold the authorizer's lock while it waits (requests to
// the server fail as unauthorized meanwhile instead of blocking); it is
// abandoned after HeadlessWait, or when another StartHeadless replaces it.
func (a *Authorizer) StartHeadless(ctx context.Context) (string, error) {
	a.hmu.Lock()
	if a.headless != nil {
		a.headless.cancel()
	}
	flowCtx, cancel := context.WithCancel(context.Background())
	h := &headlessFlow{urls: make(chan string, 1), input: make(chan url.Values, 1), done: make(chan error, 1), cancel: cancel}
	a.headless = h
	a.hmu.Unlock()
	timer := clock.Or(a.Clock).AfterFunc(HeadlessWait, cancel)
	go func() {
		defer timer.Stop()
		defer cancel()
		h.done <- a.runHeadless(flowCtx, h)
	}()
	select {
	case u := <-h.urls:
		return u, nil
	case err := <-h.done:
		a.forget(h)
		if err == nil {
			return "", a.fail(errors.New("the flow ended before it needed a browser"))
		}
		return "", err
	case <-ctx.Done():
		cancel()
		a.forget(h)
		return "", a.fail(errors.New("cancelled"))
	}
}

// runHeadless is the flow of StartHeadless: it reads the record under the
// lock, runs without it, and keeps the token under it.
func (a *Authorizer) runHeadless(ctx context.Context, h *headlessFlow) error {
	a.mu.Lock()
	err := a.load()
	stored, granted := a.rec.Client, a.granted()
	a.mu.Unlock()
	if err != nil {
		return a.fail(err)
	}
	tok, client, err := a.obtain(ctx, a.Probe(ctx), headlessReceiver{h}, stored, granted)
	if err != nil {
		return a.fail(err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.commit(tok, client); err != nil {
		return a.fail(err)
	}
	return nil
}

// CompleteHeadless finishes the flow StartHeadless began with what the
// person pasted: the full redirect URL (its code and state are checked),
// or the code alone.
func (a *Authorizer) CompleteHeadless(ctx context.Context, pasted string) error {
	a.hmu.Lock()
	h := a.headless
	a.hmu.Unlock()
	if h == nil {
		return a.fail(errors.New("no authorization is waiting; start one with auth-start"))
	}
	q, err := pastedQuery(pasted)
	if err != nil {
		return a.fail(err)
	}
	select {
	case h.input <- q:
	default:
		return a.fail(errors.New("this authorization was already completed"))
	}
	select {
	case err := <-h.done:
		a.forget(h)
		return err
	case <-ctx.Done():
		return a.fail(errors.New("cancelled while the token was being fetched"))
	}
}

func (a *Authorizer) forget(h *headlessFlow) {
	a.hmu.Lock()
	defer a.hmu.Unlock()
	if a.headless == h {
		a.headless = nil
	}
}

// pastedQuery reads a pasted redirect URL, or a bare code.
func pastedQuery(s string) (url.Values, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("paste the redirect URL (or the code) from the browser")
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return nil, errors.New("the pasted redirect URL cannot be parsed")
		}
		q := u.Query()
		if q.Get("code") == "" && q.Get("error") == "" {
			return nil, errors.New("the pasted URL carries no code")
		}
		return q, nil
	}
	return url.Values{"code": {s}}, nil
}

// headlessReceiver hands the authorization URL to StartHeadless and waits
// for CompleteHeadless. Its redirect URI is a loopback one nothing listens
// on: the browser's failed page still shows the URL to copy.
type headlessReceiver struct{ h *headlessFlow }

func (r headlessReceiver) Open(preferred string) (Pending, error) {
	if preferred == "" {
		preferred = defaultAutoRedirect
	}
	return headlessPending{h: r.h, redirect: preferred}, nil
}

type headlessPending struct {
	h        *headlessFlow
	redirect string
}

func (p headlessPending) RedirectURI() string { return p.redirect }
func (p headlessPending) Close()              {}

func (p headlessPending) Await(ctx context.Context, authURL string) (url.Values, error) {
	p.h.urls <- authURL
	select {
	case q := <-p.h.input:
		if !q.Has("state") && q.Has("code") {
			// A bare code: it can only answer this flow's request.
			if u, err := url.Parse(authURL); err == nil {
				q.Set("state", u.Query().Get("state"))
			}
		}
		return q, nil
	case <-ctx.Done():
		return nil, errors.New("no auth-complete arrived in time; start again with auth-start")
	}
}
