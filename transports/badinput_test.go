package transports

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
)

// secret stands for a credential in configuration; no error may show it.
const secret = "SENTINEL-s3cr3t-Value"

// noSecret fails if any error recorded on rec, or e, shows the secret.
func noSecret(t *testing.T, what string, rec *recorder, errs ...*messages.Error) {
	t.Helper()
	if rec != nil {
		for _, m := range rec.all() {
			switch x := m.(type) {
			case messages.DialResult:
				errs = append(errs, x.Err)
			case messages.OpResult:
				errs = append(errs, x.Err)
			case messages.ConnClosed:
				errs = append(errs, x.Err)
			}
		}
	}
	for _, e := range errs {
		if e == nil {
			continue
		}
		if s := e.Error() + string(e.RPCData); strings.Contains(s, secret) {
			t.Errorf("%s: error shows the secret: %s", what, s)
		}
	}
}

// refusedURL returns a URL on 127.0.0.1 where nothing listens.
func refusedURL(t *testing.T) string {
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", testenv.FreePort(t))
}

func TestBadCommand(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"/nonexistent/dir/" + secret, secret + "-not-on-path", "/etc/hostname"} {
		e := dialErr(t, messages.Endpoint{Command: command})
		wantErr(t, "command "+command, e, messages.KindConnectFailed, "(field command)")
		noSecret(t, "bad command", nil, e)
	}
	ep := stdioEP(t, "")
	ep.Cwd = "/nonexistent/" + secret
	e := dialErr(t, ep)
	wantErr(t, "bad cwd", e, messages.KindConnectFailed, "(field cwd)")
	noSecret(t, "bad cwd", nil, e)
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	e := dialErr(t, messages.Endpoint{URL: refusedURL(t)})
	wantErr(t, "refused url", e, messages.KindConnectFailed, "connection refused")
	e = dialErr(t, messages.Endpoint{Socket: shortTempDir(t) + "/none"})
	wantErr(t, "missing socket", e, messages.KindConnectFailed, "(field socket)")
}

func TestGarbageOutput(t *testing.T) {
	t.Parallel()
	e := dialErr(t, stdioEP(t, "--garbage"))
	wantErr(t, "garbage", e, messages.KindProtocol, "not JSON-RPC", "stdout")
}

// TestSecretsNeverShown puts the secret in every configurable value and
// fails the connection in several ways.
func TestSecretsNeverShown(t *testing.T) {
	t.Parallel()
	headers := map[string]string{"Authorization": "Bearer " + secret, "X-Api-Key": secret}
	dialFails := map[string]messages.Endpoint{
		"command path":      {Command: "/nonexistent/" + secret},
		"socket path":       {Socket: "/nonexistent/" + secret},
		"args, exit":        {Command: "/bin/sh", Args: []string{"-c", "exit 3", secret}},
		"args, debug":       {Command: "/bin/sh", Args: []string{"-c", `echo "token $0" >&2; exit 3`, secret}, Debug: true},
		"env, garbage":      withEnv(stdioEP(t, "--garbage"), "TOKEN="+secret),
		"env, debug":        {Command: "/bin/sh", Args: []string{"-c", `echo "token $TOKEN" >&2; exit 4`}, Env: map[string]string{"TOKEN": secret}, Debug: true},
		"headers, refused":  {URL: refusedURL(t), Headers: headers},
		"headers, 500":      {URL: httpEP(t, "--http 127.0.0.1:0 --post-status 500").URL, Headers: headers},
		"userinfo, refused": {URL: strings.Replace(refusedURL(t), "//", "//user:"+secret+"@", 1)},
		"username, refused": {URL: strings.Replace(refusedURL(t), "//", "//"+secret+"@", 1)},
		"query, refused":    {URL: refusedURL(t) + "?token=" + secret},
		"query, 404":        {URL: strings.TrimSuffix(httpEP(t, "--http 127.0.0.1:0").URL, "/mcp") + "/nope?token=" + secret},
		"query, 500":        {URL: httpEP(t, "--http 127.0.0.1:0 --post-status 500").URL + "?token=" + secret},
		"bad url":           {URL: "http://127.0.0.1:1/%zz" + secret},
		"bad url port":      {URL: "http://" + secret + ":x/"},
	}
	for name, ep := range dialFails {
		t.Run("dial/"+name, func(t *testing.T) {
			t.Parallel()
			e := dialErr(t, ep)
			t.Logf("%s", e)
			noSecret(t, name, nil, e)
		})
	}

	// Connections that open, then fail.
	t.Run("stdio crash", func(t *testing.T) {
		t.Parallel()
		ep := withEnv(stdioEP(t, ""), "TOKEN="+secret)
		ep.Args, ep.Debug = []string{secret}, true
		c, _ := dial(t, ep)
		toolText(t, callTool(t, c, "stderr", map[string]any{"text": "the token is " + secret}))
		wantErr(t, "crash", callTool(t, c, "crash", nil).Err, messages.KindDisconnected, "exited with status 3")
		c.waitClosed()
		noSecret(t, "stdio crash", c.rec)
	})
	for _, mode := range []string{"--http", "--sse"} {
		t.Run(mode+" server gone", func(t *testing.T) {
			t.Parallel()
			url, proc := startTestServer(t, mode+" 127.0.0.1:0")
			ep := messages.Endpoint{URL: strings.Replace(url, "//", "//user:"+secret+"@", 1) + "?token=" + secret, Headers: headers}
			c, _ := dial(t, ep)
			echo(t, c, "before")
			killProc(t, proc)
			if mode == "--sse" {
				// The broken event stream closes the connection by itself.
				c.waitClosed()
				wantErr(t, "call after the end", callTool(t, c, "echo", map[string]any{"message": "after"}).Err, messages.KindDisconnected)
			} else {
				wantErr(t, "call", callTool(t, c, "echo", map[string]any{"message": "after"}).Err, messages.KindDisconnected)
				c.waitClosed()
			}
			noSecret(t, mode+" server gone", c.rec)
		})
	}
}

func withEnv(ep messages.Endpoint, kv ...string) messages.Endpoint {
	env := map[string]string{}
	for k, v := range ep.Env {
		env[k] = v
	}
	for _, p := range kv {
		k, v, _ := strings.Cut(p, "=")
		env[k] = v
	}
	ep.Env = env
	return ep
}
