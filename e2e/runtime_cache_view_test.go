package e2e

import (
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/config"
)

// A cache view answers every mode that connects nothing exactly as a
// runtime started with the same options (text, details and the notices
// the host gets); it declines the modes that would connect, and it is not
// offered when starting the runtime would connect something at once.
func TestCacheViewAnswersAsTheRuntime(t *testing.T) {
	dir := t.TempDir()
	web := selfServer(t, "--instructions Use-echo-first.")
	web.ExcludeTools = []string{"crash", "grandchild"}
	direct := selfServer(t, "--extra-tools 2")
	direct.DirectTools = &config.DirectTools{Names: []string{"echo", "add", "extra_001"}}
	lka := selfServer(t, "")
	lka.Lifecycle = "lazy-keep-alive"
	f := &config.File{MCPServers: map[string]config.Server{
		"web": web, "direct": direct, "fresh": selfServer(t, ""), "lka": lka,
		"off": {Command: "x", Disabled: true, DirectTools: &config.DirectTools{All: true}},
	}}
	// Fill the cache the way a user does: connect, in another runtime.
	rt0, _ := startWithCache(t, f, dir, nil)
	for _, s := range []string{"web", "direct"} {
		if _, err := rt0.Connect(testCtx(t), s, false); err != nil {
			t.Fatal(err)
		}
	}
	rt0.Close()

	opts := mcprt.Options{Config: f, AgentDir: dir, HostTools: []string{"direct_add"}}
	viewHost, rtHost := &recordingHost{}, &recordingHost{}
	opts.Host = viewHost
	view, err := mcprt.OpenCacheView(opts)
	if err != nil || view == nil {
		t.Fatalf("no cache view: %v", err)
	}
	opts.Host = rtHost
	rt, d := startWithCache(t, opts.Config, dir, rtHost, opts.HostTools...)
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	ctx := testCtx(t)
	for _, args := range []string{
		`{}`, `null`, `{"server":"web"}`, `{"server":"direct"}`, `{"server":"off"}`, `{"server":"nobody"}`,
		`{"search":"echo"}`, `{"search":"sum of","server":"direct","limit":1}`, `{"search":"^e","regex":true}`,
		`{"search":"","server":"web"}`, `{"search":"","server":"off"}`, `{"search":"zzz"}`, `{"search":""}`,
		`{"describe":"web_echo"}`, `{"describe":"echo"}`, `{"describe":"crash"}`, `{"describe":"ehco"}`,
		`{"instructions":"web"}`, `{"instructions":"fresh"}`, `{"instructions":"nobody"}`,
		`{"action":"x"}`, `{"args":{}}`, `{"bogus":1}`, `[1]`,
	} {
		got, ok := view.Execute(ctx, json.RawMessage(args))
		if !ok {
			t.Errorf("%s: the cache view declined", args)
			continue
		}
		if g, w := resultJSON(got), resultJSON(mcp.Execute(ctx, json.RawMessage(args))); g != w {
			t.Errorf("%s:\ncache view: %s\nruntime:    %s", args, g, w)
		}
	}
	for _, args := range []string{`{"server":"fresh"}`, `{"search":"","server":"lka"}`, `{"tool":"web_echo","args":{"message":"x"}}`, `{"connect":"web"}`} {
		if res, ok := view.Execute(ctx, json.RawMessage(args)); ok {
			t.Errorf("%s: the cache view answered a mode that connects: %s", args, res.Text)
		}
	}
	if g, w := snapshotJSON(view.Status()), snapshotJSON(rt.Status()); g != w {
		t.Errorf("status snapshot:\ncache view: %s\nruntime:    %s", g, w)
	}
	if g, w := viewHost.all(), rtHost.all(); g != w || g == "" {
		t.Errorf("notices:\ncache view: %q\nruntime:    %q", g, w)
	}
	if view.Servers()[0] != rt.Servers()[0] || len(view.Servers()) != 5 {
		t.Errorf("servers: %v, runtime %v", view.Servers(), rt.Servers())
	}
	for _, s := range rt.Servers() {
		if n := d.DialCount(s); n != 0 {
			t.Errorf("the runtime connected %s while answering read-only modes", s)
		}
	}

	// No view when starting would connect: an eager server, or direct
	// tools with nothing cached.
	for name, edit := range map[string]func(s *config.Server){
		"eager":      func(s *config.Server) { s.Lifecycle = "eager" },
		"keep-alive": func(s *config.Server) { s.Lifecycle = "keep-alive" },
		"direct":     func(s *config.Server) { s.DirectTools = &config.DirectTools{All: true} },
	} {
		fresh := f.MCPServers["fresh"]
		edit(&fresh)
		g := &config.File{MCPServers: map[string]config.Server{"web": web, "fresh": fresh}}
		if v, err := mcprt.OpenCacheView(mcprt.Options{Config: g, AgentDir: dir}); v != nil || err != nil {
			t.Errorf("%s: a cache view (%v) although starting connects", name, err)
		}
	}
	bad := mcprt.Options{ConfigPath: dir + "/missing.json"}
	_, verr := mcprt.OpenCacheView(bad)
	_, serr := mcprt.Start(ctx, bad)
	if verr == nil || serr == nil || verr.Error() != serr.Error() {
		t.Errorf("configuration error: cache view %v, mcprt.Start %v", verr, serr)
	}
}

func resultJSON(r mcprt.Result) string           { return marshal(r) }
func snapshotJSON(s mcprt.StatusSnapshot) string { return marshal(s) }

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
