package transports

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// loopbackServer serves h on addr (127.0.0.1:0 or 127.0.0.2:0) until the
// test ends and returns its base URL.
func loopbackServer(t *testing.T, addr string, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// witness is a server on another origin that must never be reached.
func witness(t *testing.T) (base string, hits *atomic.Int32) {
	hits = new(atomic.Int32)
	base = loopbackServer(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	return base, hits
}

const redirectSecret = "redirect-secret-7f3a"

// TestRedirectCrossOrigin (issue 13 item 2): a redirect to another origin
// (127.0.0.2 instead of 127.0.0.1) fails the connection with an error that
// names both hosts and nothing else of the URLs, and the other origin never
// sees a request: neither the configured header nor the query's token goes
// there. On Streamable HTTP the POST is redirected; on legacy SSE the GET
// stream is, or the stream announces its message endpoint on the other
// origin.
func TestRedirectCrossOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		h    func(other string) http.Handler
		want string
	}{
		{"streamable POST 307", func(other string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other+"/mcp?next="+redirectSecret, http.StatusTemporaryRedirect)
			})
		}, "redirected"},
		{"sse GET 302", func(other string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					http.Error(w, "no", http.StatusMethodNotAllowed) // legacy only: fall back to SSE
					return
				}
				http.Redirect(w, r, other+"/sse", http.StatusFound)
			})
		}, "redirected"},
		{"sse endpoint elsewhere", func(other string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					http.Error(w, "no", http.StatusMethodNotAllowed)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "event: endpoint\ndata: %s/message?sessionId=%s\n\n", other, redirectSecret)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			})
		}, "announced its message endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			other, hits := witness(t)
			base := loopbackServer(t, "127.0.0.1:0", tc.h(other))
			ep := messages.Endpoint{URL: base + "/mcp?token=" + redirectSecret, Headers: map[string]string{"X-Api-Key": redirectSecret}}
			e := dialErr(t, ep)
			wantErr(t, tc.name, e, messages.KindConnectFailed, tc.want, "another origin",
				strings.TrimPrefix(base, "http://"), strings.TrimPrefix(other, "http://"))
			if strings.Contains(e.Message, redirectSecret) || strings.Contains(e.Message, "/mcp") {
				t.Errorf("error %q shows a path, a query or a header value", e.Message)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the other origin received %d requests", n)
			}
		})
	}
}

// TestRedirectSameOrigin: redirects within the origin are followed (at
// most 5), without a Referer; a loop fails with a clear error.
func TestRedirectSameOrigin(t *testing.T) {
	t.Parallel()
	target, err := url.Parse(httpEP(t, "--http 127.0.0.1:0").URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	base := loopbackServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/older?token="+redirectSecret, http.StatusPermanentRedirect)
		case "/older":
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))

	c, _ := dial(t, messages.Endpoint{URL: base + "/old"})
	echo(t, c, "after two redirects")
	if got := toolText(t, callTool(t, c, "header", map[string]any{"name": "Referer"})); got != "<unset>" {
		t.Errorf("Referer sent after a redirect: %q", got)
	}

	e := dialErr(t, messages.Endpoint{URL: base + "/loop"})
	wantErr(t, "redirect loop", e, messages.KindConnectFailed, "redirected more than 5 times")
}
