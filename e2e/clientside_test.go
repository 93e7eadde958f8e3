package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// hostHooks records what servers asked the host.
type hostHooks struct {
	mu       sync.Mutex
	progress []mcprt.Progress
	forms    []mcprt.ElicitForm
	urls     []mcprt.ElicitURL
	samples  []mcprt.SamplingRequest
}

func (h *hostHooks) client(root string) mcprt.ClientHooks {
	return mcprt.ClientHooks{
		Elicit: func(_ context.Context, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
			h.mu.Lock()
			h.forms = append(h.forms, q)
			h.mu.Unlock()
			// Only some fields: the rest take their defaults or stay out.
			return mcprt.ElicitAnswer{Action: mcprt.ElicitAccept, Content: map[string]any{"name": "Ada Lovelace", "check": true, "email": "ada@example.com"}}, nil
		},
		ElicitURL: func(_ context.Context, q mcprt.ElicitURL) (mcprt.ElicitAnswer, error) {
			h.mu.Lock()
			h.urls = append(h.urls, q)
			h.mu.Unlock()
			return mcprt.ElicitAnswer{Action: mcprt.ElicitDecline}, nil
		},
		Sample: func(_ context.Context, q mcprt.SamplingRequest) (mcprt.SamplingResult, error) {
			h.mu.Lock()
			h.samples = append(h.samples, q)
			h.mu.Unlock()
			return mcprt.SamplingResult{Text: "the host's model says hi", Model: "test-model"}, nil
		},
		Roots: []mcprt.Root{{URI: root, Name: "project"}},
		Progress: func(p mcprt.Progress) {
			h.mu.Lock()
			h.progress = append(h.progress, p)
			h.mu.Unlock()
		},
	}
}

// everythingServers are server-everything on stdio and on Streamable HTTP.
func everythingServers(t *testing.T) map[string]config.Server {
	js := testenv.EverythingJS(t)
	return map[string]config.Server{
		"stdio": {Command: testenv.Node(t), Args: []string{js, "stdio"}},
		"http":  {URL: testenv.StartEverything(t, "streamableHttp") + "/mcp"},
	}
}

// server-everything registers its elicitation, sampling and roots tools
// only for a client that declares those capabilities; each one's request
// reaches the host's hook, and the host's answer reaches the tool's result.
func TestClientSideWithEverything(t *testing.T) {
	for name, srv := range everythingServers(t) {
		t.Run(name, func(t *testing.T) {
			h := &hostHooks{}
			rt, err := mcprt.Start(testCtx(t), mcprt.Options{
				Config: &config.File{MCPServers: map[string]config.Server{"every": srv}}, AgentDir: t.TempDir(),
				Client: h.client("file:///work/project"),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			mcp, _ := rt.Tool(mcprt.MCPToolName)
			call := func(tool, args string) mcprt.Result {
				t.Helper()
				return mcp.Execute(testCtx(t), json.RawMessage(`{"tool":"`+tool+`","args":`+args+`}`))
			}

			res := call("trigger-elicitation-request", `{}`)
			if res.IsError || !strings.Contains(res.Text, "Ada Lovelace") || !strings.Contains(res.Text, "It was a dark and stormy night.") {
				t.Errorf("elicitation result (want the host's name and the schema's default first line): %s", res.Text)
			}
			if res.Details["askedUser"] != true || !strings.Contains(res.Text, "The server asked the user during this call") {
				t.Errorf("the call does not say it waited for the user: %v", res.Details["askedUser"])
			}
			if len(h.forms) != 1 || h.forms[0].Server != "every" || len(h.forms[0].Form.Fields) < 5 {
				t.Errorf("the host was asked %+v", h.forms)
			}

			res = call("trigger-sampling-request", `{"prompt":"say hi","maxTokens":50}`)
			if res.IsError || !strings.Contains(res.Text, "the host's model says hi") || res.Details["askedUser"] != nil {
				t.Errorf("sampling result: %s (%v)", res.Text, res.Details["askedUser"])
			}
			if len(h.samples) != 1 || !strings.Contains(h.samples[0].Messages[0].Text, "say hi") || h.samples[0].MaxTokens != 50 {
				t.Errorf("the host's model was asked %+v", h.samples)
			}

			res = call("get-roots-list", `{}`)
			if res.IsError || !strings.Contains(res.Text, "file:///work/project") {
				t.Errorf("roots: %s", res.Text)
			}
			// New roots are announced (notifications/roots/list_changed); the
			// server asks again and sees them.
			rt.SetRoots([]mcprt.Root{{URI: "file:///work/other", Name: "other"}})
			poll(testCtx(t), t, "the server sees the new roots", func() bool {
				res := call("get-roots-list", `{}`)
				return !res.IsError && strings.Contains(res.Text, "file:///work/other") && !strings.Contains(res.Text, "file:///work/project")
			})

			res = call("trigger-url-elicitation", `{"url":"https://auth.example.com/consent?x=1"}`)
			if len(h.urls) != 1 || h.urls[0].Host != "auth.example.com" || h.urls[0].URL != "https://auth.example.com/consent?x=1" {
				t.Errorf("URL elicitation reached the host as %+v (result %s)", h.urls, res.Text)
			}

			// A call carries a progress token; the server's progress reaches the host.
			if res := call("trigger-long-running-operation", `{"duration":0.3,"steps":3}`); res.IsError {
				t.Errorf("long-running operation: %s", res.Text)
			}
			poll(testCtx(t), t, "three progress notifications", func() bool {
				h.mu.Lock()
				defer h.mu.Unlock()
				return len(h.progress) == 3 && h.progress[2].Progress == 3 && h.progress[2].Total == 3 && h.progress[2].Server == "every"
			})

			// The error path: the call fails with -32042; the host is asked for
			// consent, and the model reads which server and host need the user.
			res = call("trigger-url-elicitation", `{"url":"https://auth.example.com/other?secret=1","errorPath":true}`)
			if !res.IsError || res.ErrorCode() != "url_elicitation_required" || !strings.Contains(res.Text, `server "every" needs the user`) ||
				!strings.Contains(res.Text, "modelcontextprotocol.io") || strings.Contains(res.Text, "https://") {
				t.Errorf("-32042 reached the model as %q", res.Text)
			}
			if len(h.urls) != 2 || h.urls[1].Host != "modelcontextprotocol.io" {
				t.Errorf("the -32042 URL reached the host as %+v", h.urls)
			}
		})
	}
}

// Without hooks the runtime declares no capability, so a server that
// checks (as server-everything does) offers none of those tools.
func TestNoHooksNoCapabilities(t *testing.T) {
	js := testenv.EverythingJS(t)
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{
		Config: &config.File{MCPServers: map[string]config.Server{"every": {Command: testenv.Node(t), Args: []string{js, "stdio"}}}}, AgentDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.Connect(testCtx(t), "every", false); err != nil {
		t.Fatal(err)
	}
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	res := mcp.Execute(testCtx(t), json.RawMessage(`{"server":"every"}`))
	for _, tool := range []string{"trigger-elicitation-request", "trigger-sampling-request", "get-roots-list"} {
		if strings.Contains(res.Text, "- "+tool+" - ") {
			t.Errorf("%s is offered to a client without the capability:\n%s", tool, res.Text)
		}
	}
	if !strings.Contains(res.Text, "echo") {
		t.Errorf("the listing lacks echo:\n%s", res.Text)
	}
}

// Bad input from a server: an unknown method gets -32601, a schema or URL
// outside the specification and malformed params get -32602 naming the
// field, a ping is answered, and a flood is bounded (16 pending; the rest
// get -32603 "too many pending requests"); the server's cancellation
// withdraws the questions the host holds. Nothing of it affects the call.
func TestServerRequestsBadInput(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for the asker test server (.ci/run installs it)")
	}
	script, _ := filepath.Abs("testdata/asker.py")
	var asked, withdrawn atomic.Int32
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{
		Config: &config.File{MCPServers: map[string]config.Server{"asker": {Command: py, Args: []string{script}}}}, AgentDir: t.TempDir(),
		Client: mcprt.ClientHooks{
			Elicit: func(ctx context.Context, q mcprt.ElicitForm) (mcprt.ElicitAnswer, error) {
				asked.Add(1)
				<-ctx.Done() // a person who never answers
				withdrawn.Add(1)
				return mcprt.ElicitAnswer{}, ctx.Err()
			},
			ElicitURL: func(context.Context, mcprt.ElicitURL) (mcprt.ElicitAnswer, error) {
				t.Error("a javascript: URL reached the host")
				return mcprt.ElicitAnswer{Action: mcprt.ElicitDecline}, nil
			},
			Sample: func(context.Context, mcprt.SamplingRequest) (mcprt.SamplingResult, error) {
				t.Error("a malformed sampling request reached the host")
				return mcprt.SamplingResult{}, nil
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	probe := func(scenario string) string {
		t.Helper()
		res := mcp.Execute(testCtx(t), json.RawMessage(`{"tool":"probe","args":{"scenario":"`+scenario+`"}}`))
		if res.IsError {
			t.Fatalf("%s: %s", scenario, res.Text)
		}
		return res.Text
	}
	for scenario, want := range map[string]string{
		"unknown":  `code=-32601 message=method "foo/bar" is not supported by this client`,
		"ping":     "result={}",
		"nested":   `code=-32602 message=params.requestedSchema: property "address": nested objects`,
		"badurl":   `code=-32602 message=params.url: the URL's scheme "javascript" is not http or https`,
		"sampling": "code=-32602 message=params.maxTokens: a positive integer is required",
	} {
		if got := probe(scenario); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", scenario, got, want)
		}
	}
	if got := probe("flood"); !strings.Contains(got, "refused=24 too_many=24 withdrawn=16") {
		t.Errorf("flood: %q", got)
	}
	poll(testCtx(t), t, "the host's 16 questions are withdrawn", func() bool { return withdrawn.Load() == 16 })
	if asked.Load() != 16 {
		t.Errorf("the host was asked %d questions, want 16", asked.Load())
	}
	if got := probe("ping"); !strings.Contains(got, "result={}") {
		t.Errorf("after the flood: %q", got)
	}
}

// A per-server logLevel is sent with logging/setLevel after the handshake,
// and the server's log messages reach the host's logger with the server's
// name and level.
func TestServerLogging(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for the asker test server (.ci/run installs it)")
	}
	script, _ := filepath.Abs("testdata/asker.py")
	var mu sync.Mutex
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	rt, err := mcprt.Start(testCtx(t), mcprt.Options{
		Config:   &config.File{MCPServers: map[string]config.Server{"asker": {Command: py, Args: []string{script}, LogLevel: "notice"}}},
		AgentDir: t.TempDir(), Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	if res := mcp.Execute(testCtx(t), json.RawMessage(`{"tool":"probe","args":{"scenario":"level"}}`)); !strings.Contains(res.Text, "level=notice") {
		t.Errorf("the server's level: %s", res.Text)
	}
	mcp.Execute(testCtx(t), json.RawMessage(`{"tool":"probe","args":{"scenario":"log"}}`))
	poll(testCtx(t), t, "the server's log message in the host's log", func() bool {
		mu.Lock()
		defer mu.Unlock()
		s := logs.String()
		return strings.Contains(s, "server=asker") && strings.Contains(s, "level=WARN") && strings.Contains(s, "disk almost full")
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
