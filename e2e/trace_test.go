package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// Seed 002's trace: true writes metadata-only JSON lines per traced server
// under the agent dir: requests and responses with method, id, size,
// duration and end reason. A secret in the environment, the headers, the
// URL and the arguments, echoed back by the server, appears in no trace;
// an untraced server has no file.
func TestTraceMetadataOnly(t *testing.T) {
	t.Parallel()
	url, _ := testenv.StartTestServer(t, "--http 127.0.0.1:0")
	local := selfServer(t, "", "API_KEY="+sentinel)
	local.Trace = true
	remote := config.Server{URL: url + "?key=" + sentinel, Headers: map[string]string{"Authorization": "Bearer " + sentinel}, Trace: true}
	agent := t.TempDir()
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{AgentDir: agent, Config: &config.File{MCPServers: map[string]config.Server{
		"local": local, "remote": remote, "quiet": selfServer(t, ""),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	res, err := rt.CallTool(ctx, "local", "env", map[string]any{"name": "API_KEY"})
	if err != nil || !strings.Contains(res.Content[0].Text, sentinel) {
		t.Fatalf("the server does not echo the secret: %+v %v", res, err)
	}
	for _, s := range []string{"local", "remote", "quiet"} {
		if res, err := rt.CallTool(ctx, s, "echo", map[string]any{"message": sentinel}); err != nil || !strings.Contains(res.Content[0].Text, sentinel) {
			t.Fatalf("%s echo: %+v %v", s, res, err)
		}
	}
	hang, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := rt.CallTool(hang, "local", "hang", nil); done <- err }()
	poll(ctx, t, "the hang to be in flight", func() bool { return rt.ServerStatuses()[indexOf(rt.Servers(), "local")].Leases > 0 })
	cancel()
	if err := <-done; err == nil {
		t.Fatalf("the cancelled call: %v", err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(agent, mcprt.TraceDirName)
	if _, err := os.Stat(filepath.Join(dir, "quiet.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("an untraced server has a trace: %v", err)
	}
	allowed := map[string]bool{"t": true, "server": true, "gen": true, "dir": true, "kind": true, "method": true, "id": true,
		"bytes": true, "ms": true, "end": true, "transport": true, "protocol": true, "dropped": true}
	for _, server := range []string{"local", "remote"} {
		path := filepath.Join(dir, server+".jsonl")
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v", path, st.Mode().Perm())
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), sentinel) || strings.Contains(string(b), "127.0.0.1") {
			t.Fatalf("the trace of %s holds a secret or the URL:\n%s", server, b)
		}
		seen := map[string]bool{}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("not a JSON line: %q", sc.Text())
			}
			for k := range line {
				if !allowed[k] {
					t.Errorf("%s: a field %q in %s", server, k, sc.Text())
				}
			}
			key := line["dir"].(string) + " " + line["kind"].(string)
			if m, ok := line["method"].(string); ok {
				key += " " + m
			}
			if e, ok := line["end"].(string); ok {
				key += " " + e
			}
			if _, ok := line["ms"]; ok && line["kind"] == "response" {
				key += " timed"
			}
			seen[key] = true
		}
		for _, want := range []string{"- dial", "- connected ok", "- closed ok", "out request tools/call", "in response tools/call ok timed"} {
			if !seen[want] {
				t.Errorf("the trace of %s lacks %q; it has %v", server, want, seen)
			}
		}
		if server == "local" && !seen["out cancel"] {
			t.Errorf("the local trace lacks the cancel: %v", seen)
		}
	}
}

// indexOf returns the index of s in list, or -1.
func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// A traced server's requests to the client (here sampling, against
// server-everything) are traced too, as metadata: the method, sizes, the
// host's time and the end, never the prompt or the host's answer.
func TestTraceServerRequests(t *testing.T) {
	js := testenv.EverythingJS(t)
	agent := t.TempDir()
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{AgentDir: agent,
		Config: &config.File{MCPServers: map[string]config.Server{"every": {Command: testenv.Node(t), Args: []string{js, "stdio"}, Trace: true}}},
		Client: mcprt.ClientHooks{Sample: func(context.Context, mcprt.SamplingRequest) (mcprt.SamplingResult, error) {
			return mcprt.SamplingResult{Text: "the answer is " + sentinel, Model: "test-model"}, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.CallTool(testCtx(t), "every", "trigger-sampling-request", map[string]any{"prompt": "say " + sentinel, "maxTokens": 50})
	if err != nil || !strings.Contains(res.Content[0].Text, sentinel) {
		t.Fatalf("sampling: %+v %v", res, err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(agent, mcprt.TraceDirName, "every.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if strings.Contains(text, sentinel) {
		t.Fatalf("the trace holds the prompt or the answer:\n%s", text)
	}
	for _, want := range []string{`"dir":"in","kind":"server-request","method":"sampling/createMessage"`, `"dir":"out","kind":"server-response","method":"sampling/createMessage"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the trace lacks %s:\n%s", want, text)
		}
	}
}
