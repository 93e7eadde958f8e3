package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
)

// Each bad input of issue item 13 gets a specific, single-line error that
// names the server and never shows a secret value, and the healthy server
// configured beside it keeps working. Secrets (sentinel values) sit in the
// bad server's env or headers and in the healthy server's env.

const sentinel = "SENTINEL-s3cr3t-4711"

// badRig starts a runtime with the server "bad" and a healthy server "good".
func badRig(t *testing.T, bad config.Server) *rig {
	t.Helper()
	good := selfServer(t, "", "GOOD_TOKEN="+sentinel)
	return newRig(t, map[string]config.Server{"bad": bad, "good": good}, false)
}

// noSecret fails if the sentinel appears in the result or in the status.
func (r *rig) noSecret(res mcprt.Result) {
	r.t.Helper()
	details, _ := json.Marshal(res.Details)
	status := r.exec(r.ctx, `{}`)
	statusDetails, _ := json.Marshal(status.Details)
	for _, s := range []string{res.Text, string(details), status.Text, string(statusDetails)} {
		if strings.Contains(s, sentinel) {
			r.t.Fatalf("a secret value leaked: %s", s)
		}
	}
}

// goodStillWorks calls the healthy server by its prefixed name.
func (r *rig) goodStillWorks() {
	r.t.Helper()
	wantOK(r.t, r.exec(r.ctx, `{"tool":"good_echo","args":{"message":"fine"}}`), "echo: fine")
	if st := r.status("good"); st.LastError != nil {
		r.t.Fatalf("good server has an error: %v", st.LastError)
	}
}

func TestBadInputCommandNotFound(t *testing.T) {
	t.Parallel()
	r := badRig(t, config.Server{Command: filepath.Join(t.TempDir(), "no-such-server"), Env: map[string]string{"API_KEY": sentinel}})
	res := r.exec(r.ctx, `{"server":"bad"}`)
	wantError(t, res, "connect_failed", "bad")
	if !strings.Contains(res.Text, "not found") {
		t.Fatalf("error does not say what is wrong: %q", res.Text)
	}
	r.noSecret(res)
	r.goodStillWorks()
}

func TestBadInputConnectionRefused(t *testing.T) {
	t.Parallel()
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", testenv.FreePort(t))
	r := badRig(t, config.Server{URL: url, Headers: map[string]string{"Authorization": "Bearer " + sentinel}})
	res := r.exec(r.ctx, `{"server":"bad"}`)
	wantError(t, res, "connect_failed", "bad")
	if !strings.Contains(res.Text, "connection refused") {
		t.Fatalf("error does not say what is wrong: %q", res.Text)
	}
	r.noSecret(res)
	r.goodStillWorks()
}

func TestBadInputNonJSONOutput(t *testing.T) {
	t.Parallel()
	r := badRig(t, selfServer(t, "--garbage", "API_KEY="+sentinel))
	res := r.exec(r.ctx, `{"server":"bad"}`)
	wantError(t, res, "protocol_error", "bad")
	if !strings.Contains(res.Text, "not JSON") {
		t.Fatalf("error does not say what is wrong: %q", res.Text)
	}
	r.noSecret(res)
	r.goodStillWorks()
}

func TestBadInputServerExitsMidCall(t *testing.T) {
	t.Parallel()
	r := badRig(t, selfServer(t, "", "API_KEY="+sentinel))
	res := r.exec(r.ctx, `{"tool":"bad_crash"}`)
	wantError(t, res, "disconnected", "bad")
	if !strings.Contains(res.Text, "exited with status 3") {
		t.Fatalf("error does not say what happened: %q", res.Text)
	}
	r.noSecret(res)
	r.goodStillWorks()
}

func TestBadInputHTTP500(t *testing.T) {
	t.Parallel()
	url, _ := testenv.StartTestServer(t, "--http 127.0.0.1:0 --post-status 500")
	r := badRig(t, config.Server{URL: url, Headers: map[string]string{"X-Api-Key": sentinel}})
	res := r.exec(r.ctx, `{"server":"bad"}`)
	wantError(t, res, "init_failed", "bad")
	if !strings.Contains(res.Text, "HTTP 500") {
		t.Fatalf("error does not say what happened: %q", res.Text)
	}
	r.noSecret(res)
	r.goodStillWorks()
}

func TestBadInputToolNotFound(t *testing.T) {
	t.Parallel()
	r := badRig(t, selfServer(t, "", "API_KEY="+sentinel))
	res := r.exec(r.ctx, `{"tool":"no_such_tool","args":{}}`)
	wantError(t, res, "tool_not_found", "")
	if !strings.Contains(res.Text, `"no_such_tool"`) {
		t.Fatalf("error does not name the tool: %q", res.Text)
	}
	r.noSecret(res)
	// A server-prefixed name of a tool that server lacks is not found either.
	res = r.exec(r.ctx, `{"tool":"bad_no_such_tool"}`)
	wantError(t, res, "tool_not_found", "")
	r.goodStillWorks()
}

func TestBadInputArgsNotAnObject(t *testing.T) {
	t.Parallel()
	r := badRig(t, selfServer(t, "", "API_KEY="+sentinel))
	for _, args := range []string{
		`{"tool":"bad_echo","args":[1,2]}`,
		`{"tool":"bad_echo","args":"not json"}`,
		`{"tool":"bad_echo","args":"[\"an array in a string\"]"}`,
		`{"tool":"bad_echo","args":42}`,
		`["not","an","object"]`,
		`{"tool":"bad_echo","arguments":{}}`,
	} {
		res := r.exec(r.ctx, args)
		wantError(t, res, "invalid_args", "")
		r.noSecret(res)
	}
	if d := r.status("bad"); d.Generation != 0 {
		t.Fatalf("malformed arguments connected the server: %+v", d)
	}
	r.goodStillWorks()
}
