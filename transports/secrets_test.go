package transports

import (
	"context"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testkit"
	"github.com/mcprt/mcprt/messages"
)

const secretSentinel = "SENTINEL-5ec7"

// TestSecretCommands: the encoding of messages.Endpoint (a leading "!" is
// a command, "!!" a literal "!"), and every limit of the command.
func TestSecretCommands(t *testing.T) {
	t.Setenv("MCPRT_SECRET_TEST_VAR", "from-env") // the command sees the host's environment
	d := newDialer(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		value, want, fails string
	}{
		{"plain", "plain", ""},
		{"!!not a command", "!not a command", ""},
		{"!printf '  tok-1 \\n\\n'", "tok-1", ""},
		{"!echo " + secretSentinel + " >&2; echo visible", "visible", ""}, // stderr discarded
		{"!cat; echo after-stdin", "after-stdin", ""},                     // stdin is closed, not inherited
		{"!echo $MCPRT_SECRET_TEST_VAR", "from-env", ""},                  // the host's environment
		{"!echo " + secretSentinel + "; exit 3", "", "failed (exit status 3)"},
		{"!true", "", "printed nothing"},
		{"!printf '  \\n'", "", "printed nothing"},
		{"!head -c 1048577 /dev/zero | tr '\\0' a", "", "printed more than 1 MiB"},
		{"!/nonexistent/" + secretSentinel, "", "failed (exit status 127)"},
	} {
		got, err := d.secretValue(ctx, "srv", "headers", tc.value)
		if tc.fails == "" {
			if err != nil || got != tc.want {
				t.Errorf("%q: %q, %v; want %q", tc.value, got, err, tc.want)
			}
			continue
		}
		wantErr(t, tc.value, err, messages.KindConnectFailed, "field headers: the command that supplies its value "+tc.fails)
		if err != nil && (strings.Contains(err.Message, secretSentinel) || strings.Contains(err.Message, "echo")) || got != "" {
			t.Errorf("%q: the error or value leaks: %v %q", tc.value, err, got)
		}
	}
	if got, err := d.secretValue(ctx, "srv", "env", "!head -c 1048576 /dev/zero | tr '\\0' b"); err != nil || len(got) != 1<<20 {
		t.Errorf("exactly 1 MiB is allowed: %d bytes, %v", len(got), err)
	}
}

// TestSecretCommandTimeout: a command that runs past 10 s on the dialer's
// clock is stopped, with its process group.
func TestSecretCommandTimeout(t *testing.T) {
	t.Parallel()
	clk := testkit.NewClock()
	d := newDialer(t)
	d.Clock = clk
	mark := clk.Mark()
	done := make(chan *messages.Error, 1)
	go func() {
		_, err := d.secretValue(context.Background(), "srv", "bearerToken", "!sleep 300 & sleep 300")
		done <- err
	}()
	clk.WaitArmed(testCtx(t), t, mark, SecretTimeout)
	clk.Advance(SecretTimeout)
	select {
	case err := <-done:
		wantErr(t, "timeout", err, messages.KindConnectFailed, "field bearerToken: the command that supplies its value did not finish within 10s")
	case <-testCtx(t).Done():
		t.Fatal("the command was not stopped at its deadline")
	}
}

// TestResolveSecrets: the endpoint's references are resolved by transport,
// the bearer token becomes the Authorization header, and a configuration
// problem fails before any I/O.
func TestResolveSecrets(t *testing.T) {
	t.Parallel()
	d := newDialer(t)
	ctx := testCtx(t)
	req := messages.DialRequest{Server: "srv", Endpoint: messages.Endpoint{URL: "https://h/mcp",
		Headers: map[string]string{"X-A": "!echo a", "X-B": "!!b"}, BearerToken: "!echo tok"}}
	if err := d.resolveSecrets(ctx, &req); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"X-A": "a", "X-B": "!b", "Authorization": "Bearer tok"}
	for k, v := range want {
		if req.Endpoint.Headers[k] != v {
			t.Errorf("header %s = %q, want %q", k, req.Endpoint.Headers[k], v)
		}
	}
	if req.Endpoint.BearerToken != "" {
		t.Error("the bearer token stays on the endpoint")
	}
	req = messages.DialRequest{Server: "srv", Endpoint: messages.Endpoint{Command: "x", Env: map[string]string{"K": "!exit 1"}}}
	wantErr(t, "env", d.resolveSecrets(ctx, &req), messages.KindConnectFailed, "field env:")
	req = messages.DialRequest{Server: "srv", Endpoint: messages.Endpoint{URL: "https://h/", Problem: "field url: uses an environment variable that is not set"}}
	wantErr(t, "problem", d.resolveSecrets(ctx, &req), messages.KindConfig, "field url: uses an environment variable")
}

// TestSecretsReachTheServer: over real connections, env values from
// commands reach a stdio server, and a bearer token from a command reaches
// an HTTP server as its Authorization header.
func TestSecretsReachTheServer(t *testing.T) {
	t.Parallel()
	ep := stdioEP(t, "")
	ep.Env["MCPRT_TEST_FOO"] = "!printf from-command"
	c, _ := dial(t, ep)
	if got := toolText(t, callTool(t, c, "env", map[string]any{"name": "MCPRT_TEST_FOO"})); got != "from-command" {
		t.Errorf("env from a command reached the server as %q", got)
	}
	hep := httpEP(t, "--http 127.0.0.1:0")
	hep.BearerToken = "!echo tok-" + secretSentinel
	hc, _ := dial(t, hep)
	if got := toolText(t, callTool(t, hc, "header", map[string]any{"name": "Authorization"})); got != "Bearer tok-"+secretSentinel {
		t.Errorf("Authorization reached the server as %q", got)
	}
	bad := httpEP(t, "--http 127.0.0.1:0")
	bad.Headers = map[string]string{"Authorization": "!echo " + secretSentinel + "; exit 2"}
	e := dialErr(t, bad)
	wantErr(t, "failing header command", e, messages.KindConnectFailed, "field headers", "exit status 2")
	if strings.Contains(e.Error(), secretSentinel) {
		t.Errorf("the dial error leaks: %v", e)
	}
}
