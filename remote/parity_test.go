package remote

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// An attached session has every host-facing method of a Runtime, with the
// same signature, but for those listed here.
func TestSessionHasTheRuntimesAPI(t *testing.T) {
	notOffered := map[string]string{
		"LiveActors":      "the count of the runtime's own actors: a session runs none",
		"AuthServers":     "OAuth is the member's: its servers are logged in where they run (runtime auth)",
		"Authorizer":      "OAuth is the member's: its servers are logged in where they run (runtime auth)",
		"ExportedServers": "a member's own wiring: what it offers the members of its cluster",
		"SetPeers":        "a member's own wiring: the servers the members of its cluster run",
		"SetPeerOffers":   "a member's own wiring: who offers which server in its cluster",
	}
	// A session's own type stands for the runtime's, with its methods.
	own := strings.NewReplacer("*remote.Subscription", "*mcprt.Subscription")
	rsub, ssub := reflect.TypeOf(&mcprt.Subscription{}), reflect.TypeOf(&Subscription{})
	for i := 0; i < rsub.NumMethod(); i++ {
		m := rsub.Method(i)
		if sm, ok := ssub.MethodByName(m.Name); !ok || signature(sm.Type) != signature(m.Type) {
			t.Errorf("remote.Subscription has no %s %s", m.Name, m.Type)
		}
	}
	rt, sess := reflect.TypeOf(&mcprt.Runtime{}), reflect.TypeOf(&Session{})
	for i := 0; i < rt.NumMethod(); i++ {
		m := rt.Method(i)
		sm, ok := sess.MethodByName(m.Name)
		if !ok {
			if notOffered[m.Name] == "" {
				t.Errorf("Session has no %s %s", m.Name, m.Type)
			}
			continue
		}
		if got, want := own.Replace(signature(sm.Type)), mirrored(signature(m.Type)); got != want {
			t.Errorf("Session.%s is %s; Runtime's is %s", m.Name, got, want)
		}
	}
}

// signature renders a method's type without its receiver.
func signature(t reflect.Type) string {
	var in, out []string
	for i := 1; i < t.NumIn(); i++ {
		in = append(in, t.In(i).String())
	}
	for i := 0; i < t.NumOut(); i++ {
		out = append(out, t.Out(i).String())
	}
	return "func(" + strings.Join(in, ", ") + ") (" + strings.Join(out, ", ") + ")"
}

// scriptedServer is the test server serving a script: a prompt with two
// arguments, a resource and a template.
func scriptedServer(t *testing.T) config.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	err := testserver.WriteScript(path, testserver.Script{
		Prompts:           []json.RawMessage{json.RawMessage(`{"name":"greet","arguments":[{"name":"who","required":true},{"name":"tone"}]}`)},
		Resources:         []json.RawMessage{json.RawMessage(`{"uri":"note://a","name":"a"}`)},
		ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"note://{id}","name":"note"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return config.Server{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio --script " + path)}
}

// GetPromptWords, RenderResource, RenderTemplate and ConfigIssues
// through a session answer exactly what the member's runtime answers,
// successes and failures alike.
func TestSessionParityWithTheRuntime(t *testing.T) {
	r := newRig(t, map[string]config.Server{
		"sc":  scriptedServer(t),
		"bad": {URL: "ftp://example.com/mcp"}, // a configuration issue
	}, ServeOptions{})
	s := r.attach(t, AttachOptions{})
	ctx := testkit.Ctx(t)
	if _, err := s.Connect(ctx, "sc", false); err != nil {
		t.Fatal(err)
	}
	// The same JSON value (a result's details cross as JSON, so an
	// object's keys come back sorted, as a tool's result's do).
	same := func(what string, got, want any) {
		t.Helper()
		var gv, wv any
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		_ = json.Unmarshal(g, &gv)
		_ = json.Unmarshal(w, &wv)
		if !reflect.DeepEqual(gv, wv) {
			t.Errorf("%s through the session:\n%s\nthe runtime's:\n%s", what, g, w)
		}
	}

	for _, words := range [][]string{{"Ada", "tone=warm"}, {"Ada", "warm", "extra"}, {"tone=warm"}} {
		got, gerr := s.GetPromptWords(ctx, "sc", "greet", words)
		want, werr := r.rt.GetPromptWords(ctx, "sc", "greet", words)
		same("GetPromptWords "+strings.Join(words, " "), got, want)
		if messages.KindOf(gerr) != messages.KindOf(werr) || (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Errorf("GetPromptWords %v: %v through the session, %v on the runtime", words, gerr, werr)
		}
	}
	if res, err := s.GetPromptWords(ctx, "sc", "greet", []string{"Ada", "tone=warm"}); err != nil || !strings.Contains(res.Text, `prompt greet with {"tone":"warm","who":"Ada"}`) {
		t.Errorf("GetPromptWords: %+v, %v", res, err)
	}
	// A prompt the catalog does not list takes NAME=VALUE words only.
	if _, err := s.GetPromptWords(ctx, "sc", "unlisted", []string{"plain"}); messages.KindOf(err) != messages.KindInvalidArgs {
		t.Errorf("GetPromptWords of an unlisted prompt with a plain word: %v", err)
	}

	res := s.RenderResource(ctx, "sc", "note://a")
	if res.IsError || !strings.Contains(res.Text, "[resource sc: note://a]") || !strings.Contains(res.Text, "read note://a") {
		t.Errorf("RenderResource: %+v", res)
	}
	same("RenderResource", res, r.rt.RenderResource(ctx, "sc", "note://a"))
	res = s.RenderTemplate(ctx, "sc", "note", map[string]any{"id": "b"})
	if res.IsError || !strings.Contains(res.Text, "read note://b") {
		t.Errorf("RenderTemplate: %+v", res)
	}
	same("RenderTemplate", res, r.rt.RenderTemplate(ctx, "sc", "note", map[string]any{"id": "b"}))
	for _, c := range []struct{ server, what string }{{"nope", "note://a"}, {"sc", "https://u:p@x/"}} {
		got := s.RenderResource(ctx, c.server, c.what)
		if !got.IsError || got.ErrorCode() == "" {
			t.Errorf("RenderResource %s %s: %+v, want a failure with a code", c.server, c.what, got)
		}
		same("RenderResource "+c.server+" "+c.what, got, r.rt.RenderResource(ctx, c.server, c.what))
	}
	for _, tmpl := range []string{"", "note://a", "missing"} {
		got := s.RenderTemplate(ctx, "sc", tmpl, nil)
		if !got.IsError {
			t.Errorf("RenderTemplate %q: %+v, want a failure", tmpl, got)
		}
		same("RenderTemplate "+tmpl, got, r.rt.RenderTemplate(ctx, "sc", tmpl, nil))
	}

	issues := s.ConfigIssues()
	if len(issues) == 0 || issues[0].Server != "bad" || !strings.Contains(issues[0].Message, "http") {
		t.Errorf("ConfigIssues: %+v", issues)
	}
	same("ConfigIssues", issues, r.rt.ConfigIssues())

	_ = s.Close()
	if res := s.RenderResource(ctx, "sc", "note://a"); !res.IsError || res.ErrorCode() != messages.KindShutdown.Code() {
		t.Errorf("RenderResource after Close: %+v", res)
	}
}

// newAskingRig is newRig with the member's runtime asking its sessions
// (ServeOptions.Asks, Server.ClientHooks).
func newAskingRig(t *testing.T, servers map[string]config.Server, opts ServeOptions) *rig {
	t.Helper()
	return startRig(t, servers, opts, true)
}

// rootsChanges counts the notifications/roots/list_changed a test server
// logged.
func rootsChanges(t *testing.T, log string) int {
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "notifications/roots/list_changed\n")
}

// SetRoots replaces a session's roots: a roots/list put to the session is
// answered with them, and every server of the member is told
// (notifications/roots/list_changed), the ones the session never called
// too. A session that offers no roots changes nothing, as a runtime
// started without roots.
func TestSessionSetRoots(t *testing.T) {
	dir := t.TempDir()
	logs := map[string]string{}
	servers := map[string]config.Server{}
	for _, name := range []string{"used", "other"} {
		logs[name] = filepath.Join(dir, name+".notes")
		servers[name] = testServer(t, map[string]string{testserver.EnvArgs: "--stdio --client-requests", testserver.EnvNoteLog: logs[name]})
	}
	r := newAskingRig(t, servers, ServeOptions{Asks: Asks{Roots: true}})
	ctx := testkit.Ctx(t)
	for name := range servers { // connected, so they can be told
		if _, err := r.rt.Connect(ctx, name, false); err != nil {
			t.Fatal(err)
		}
	}
	a := r.attach(t, AttachOptions{Client: mcprt.ClientHooks{Roots: []mcprt.Root{{URI: "file:///work/a"}}}})
	none := r.attach(t, AttachOptions{})
	askRoots := func() string {
		t.Helper()
		res, err := a.CallTool(ctx, "used", testserver.ToolAskRoots, nil)
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("ask_roots: %+v, %v", res, err)
		}
		return res.Content[0].Text
	}
	if got := askRoots(); got != "file:///work/a" {
		t.Fatalf("roots before SetRoots: %q", got)
	}

	none.SetRoots([]mcprt.Root{{URI: "file:///nobody"}}) // no roots offered: nothing is told
	a.SetRoots([]mcprt.Root{{URI: "file:///work/b", Name: "b"}, {URI: "file:///work/c"}})
	for name, log := range logs {
		testkit.Poll(ctx, t, name+" told its roots changed", func() bool { return rootsChanges(t, log) > 0 })
		// The notices of one server arrive in order: the session without
		// roots, which asked first, sent none.
		if n := rootsChanges(t, log); n != 1 {
			t.Errorf("%s was told %d times, want once", name, n)
		}
	}
	if got := askRoots(); got != "file:///work/b,file:///work/c" {
		t.Errorf("roots after SetRoots: %q", got)
	}
	a.SetRoots(nil)
	if got := askRoots(); got != "" {
		t.Errorf("roots after SetRoots(nil): %q, want none", got)
	}
	if got, err := none.CallTool(ctx, "used", testserver.ToolAskRoots, nil); err != nil || !strings.Contains(got.Content[0].Text, "error") {
		t.Errorf("ask_roots from the session without roots: %+v, %v", got, err)
	}
}

// A member that lets servers ask no roots tells them nothing when a
// session's roots change.
func TestSessionSetRootsWithoutAsks(t *testing.T) {
	dir := t.TempDir()
	notes, requests := filepath.Join(dir, "notes"), filepath.Join(dir, "requests")
	r := newAskingRig(t, map[string]config.Server{"ts": testServer(t, map[string]string{testserver.EnvNoteLog: notes, testserver.EnvRequestLog: requests})}, ServeOptions{Asks: Asks{Elicit: true}})
	ctx := testkit.Ctx(t)
	if _, err := r.rt.Connect(ctx, "ts", false); err != nil {
		t.Fatal(err)
	}
	a := r.attach(t, AttachOptions{Client: mcprt.ClientHooks{Roots: []mcprt.Root{{URI: "file:///a"}}}})
	a.SetRoots([]mcprt.Root{{URI: "file:///b"}})
	// The server reads (and logs) its input in order: a notice sent
	// before this call would be logged before the call.
	if _, err := a.CallTool(ctx, "ts", "echo", map[string]any{"message": "after"}); err != nil {
		t.Fatal(err)
	}
	recs, err := testserver.ReadRequestLog(requests)
	if err != nil || len(recs) == 0 || recs[len(recs)-1].Method != "tools/call" {
		t.Fatalf("request log: %+v, %v", recs, err)
	}
	if n := rootsChanges(t, notes); n != 0 {
		t.Errorf("the server was told %d times its roots changed; the member offers no roots", n)
	}
}

// A session's SetRoots reaches the servers of another member it uses (the
// member holds a session there): the server is told, asks again through
// that member, and gets the session's new roots.
func TestSessionSetRootsThroughPeer(t *testing.T) {
	ct := filepath.Join(t.TempDir(), "cluster.token")
	log := filepath.Join(t.TempDir(), "notes")
	a := newAskingRig(t, map[string]config.Server{"ts": testServer(t, map[string]string{
		testserver.EnvArgs: "--stdio --client-requests", testserver.EnvNoteLog: log})}, ServeOptions{Asks: Asks{Roots: true}, ClusterTokenFile: ct})
	b := newAskingRig(t, nil, ServeOptions{Asks: Asks{Roots: true}, ClusterTokenFile: ct, Peers: []Peer{{Addr: a.srv.Addr()}}})
	s := b.attach(t, AttachOptions{Client: mcprt.ClientHooks{Roots: []mcprt.Root{{URI: "file:///one"}}}})
	ctx := testkit.Ctx(t)
	roots := func() string {
		res, err := s.CallTool(ctx, "ts", testserver.ToolAskRoots, nil)
		switch {
		case err != nil:
			return "error: " + err.Error()
		case len(res.Content) == 0:
			return "no content"
		}
		return res.Content[0].Text
	}
	testkit.Poll(ctx, t, "a's server through b, asking the session on b", func() bool { return roots() == "file:///one" })
	s.SetRoots([]mcprt.Root{{URI: "file:///two"}})
	testkit.Poll(ctx, t, "a's server told its roots changed", func() bool { return rootsChanges(t, log) == 1 })
	if got := roots(); got != "file:///two" {
		t.Errorf("roots after SetRoots through the peer: %q", got)
	}
}
