package auth

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// approve opens the authorization URL as a browser would and returns the
// redirect URL it is sent back to (without following it).
func approve(t *testing.T, authURL string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("Location")
}

func TestHeadlessStartComplete(t *testing.T) {
	p := newPeer(t)
	a := codeAuthorizer(p)
	ctx := context.Background()
	u, err := a.StartHeadless(ctx)
	if err != nil || !strings.HasPrefix(u, p.issuer()+"/authorize?") {
		t.Fatalf("start: %q %v", u, err)
	}
	back := approve(t, u)
	if err := a.CompleteHeadless(ctx, back); err != nil {
		t.Fatalf("complete: %v", err)
	}
	if resp, err := post(t, a, p.url()); err != nil || resp.StatusCode != 200 || len(p.authorizes) != 1 {
		t.Fatalf("after login: %v %v, authorizes %d", resp, err, len(p.authorizes))
	}
	// A second completion has nothing to complete.
	if err := a.CompleteHeadless(ctx, back); err == nil {
		t.Fatal("completed twice")
	}
}

// A bare code works; a pasted URL with another state is refused and no
// token is requested.
func TestHeadlessCodeAndWrongState(t *testing.T) {
	p := newPeer(t)
	a := codeAuthorizer(p)
	ctx := context.Background()
	u, _ := a.StartHeadless(ctx)
	back, _ := url.Parse(approve(t, u))
	if err := a.CompleteHeadless(ctx, back.Query().Get("code")); err != nil {
		t.Fatalf("bare code: %v", err)
	}
	u, _ = a.StartHeadless(ctx)
	back, _ = url.Parse(approve(t, u))
	q := back.Query()
	q.Set("state", "forged")
	back.RawQuery = q.Encode()
	tokens := len(p.tokenForms)
	err := a.CompleteHeadless(ctx, back.String())
	if err == nil || !strings.Contains(err.Error(), "state") || len(p.tokenForms) != tokens {
		t.Fatalf("forged state: %v", err)
	}
}
