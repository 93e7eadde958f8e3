package transports

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Limits of a secret's command ("!command" values).
const (
	// SecretTimeout bounds how long a secret's command may run.
	SecretTimeout = 10 * time.Second
	// SecretMaxOutput bounds what it may print.
	SecretMaxOutput = 1 << 20
)

// resolveSecrets replaces the secret references of req's endpoint by their
// values, right before the connection opens: every "!command" of the
// stdio server's env, or of the HTTP server's headers and bearer token, is
// run (see runSecret); "!!" loses its first "!". The bearer token becomes
// an Authorization header. An endpoint configuration marked as unusable
// (Problem) fails here, before any I/O. Errors name the server and the
// field, never a command or its output.
func (d *Dialer) resolveSecrets(ctx context.Context, req *messages.DialRequest) *messages.Error {
	ep := req.Endpoint
	if ep.Problem != "" {
		return messages.Errorf(messages.KindConfig, req.Server, "%s", ep.Problem)
	}
	var err *messages.Error
	resolveMap := func(field string, m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys) // commands run in a deterministic order
		for _, k := range keys {
			if err != nil {
				return nil
			}
			out[k], err = d.secretValue(ctx, req.Server, field, m[k])
		}
		return out
	}
	switch ep.Kind() {
	case messages.TransportStdio:
		ep.Env = resolveMap("env", ep.Env)
	case messages.TransportHTTP:
		ep.Headers = resolveMap("headers", ep.Headers)
		if err == nil && ep.BearerToken != "" {
			var token string
			if token, err = d.secretValue(ctx, req.Server, "bearerToken", ep.BearerToken); err == nil {
				if ep.Headers == nil {
					ep.Headers = map[string]string{}
				}
				ep.Headers["Authorization"] = "Bearer " + token
			}
		}
	}
	if err != nil {
		return err
	}
	ep.BearerToken = ""
	req.Endpoint = ep
	return nil
}

// secretValue decodes one value of messages.Endpoint's secret encoding.
func (d *Dialer) secretValue(ctx context.Context, server, field, v string) (string, *messages.Error) {
	switch {
	case strings.HasPrefix(v, "!!"):
		return v[1:], nil
	case strings.HasPrefix(v, "!"):
		out, why := d.runSecret(ctx, v[1:])
		if why != "" {
			return "", messages.Errorf(messages.KindConnectFailed, server, "field %s: the command that supplies its value %s", field, why)
		}
		return out, nil
	}
	return v, nil
}

// runSecret runs a secret's command with sh -c in the host's environment:
// stdin closed, stderr discarded, at most SecretTimeout on the dialer's
// clock, at most SecretMaxOutput bytes of output, which is trimmed and must
// not be empty. It returns the output, or why it failed (never quoting the
// command or its output).
func (d *Dialer) runSecret(ctx context.Context, command string) (string, string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timedOut := make(chan struct{})
	t := d.clock().AfterFunc(SecretTimeout, func() {
		close(timedOut)
		cancel()
	})
	defer t.Stop()
	cmd := exec.CommandContext(ctx, secretShell[0], append(secretShell[1:], command)...)
	cmd.Env = os.Environ()
	cmd.Stdin, cmd.Stderr = nil, nil // /dev/null: stdin closed, stderr discarded
	ownGroup(cmd)
	var (
		treeMu sync.Mutex
		tree   *procTree // set once started; Cancel may run from then on
	)
	cmd.Cancel = func() error {
		treeMu.Lock()
		defer treeMu.Unlock()
		if tree == nil {
			return cmd.Process.Kill()
		}
		tree.kill()
		return nil
	}
	cmd.WaitDelay = termGrace
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err == nil {
		started := adoptTree(cmd.Process)
		treeMu.Lock()
		tree = &started
		treeMu.Unlock()
		defer started.release()
	}
	if err != nil {
		select {
		case <-timedOut: // the deadline passed before it could start
			return "", "did not finish within " + SecretTimeout.String()
		default:
			return "", "could not be started"
		}
	}
	var buf bytes.Buffer
	n, _ := io.Copy(&buf, io.LimitReader(stdout, SecretMaxOutput+1))
	if n > SecretMaxOutput {
		cancel() // stop it: the value is unusable whatever else it prints
	}
	err = cmd.Wait()
	treeMu.Lock()
	tree.kill() // nothing of its group outlives it
	treeMu.Unlock()
	select {
	case <-timedOut:
		return "", "did not finish within " + SecretTimeout.String()
	default:
	}
	var ee *exec.ExitError
	switch {
	case n > SecretMaxOutput:
		return "", "printed more than 1 MiB"
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) && err != nil:
		return "", "was cancelled"
	case errors.As(err, &ee):
		return "", "failed (exit status " + strconv.Itoa(ee.ExitCode()) + ")"
	case err != nil:
		return "", "failed"
	}
	out := strings.TrimSpace(buf.String())
	if out == "" {
		return "", "printed nothing"
	}
	return out, ""
}

// secretsOf lists every configured value of an endpoint, for scrubbing.
func secretsOf(ep messages.Endpoint) []string {
	var s []string
	s = append(s, ep.Command, ep.Cwd, ep.Socket, ep.URL)
	s = append(s, ep.Args...)
	for _, v := range ep.Env {
		s = append(s, v)
	}
	for _, v := range ep.Headers {
		s = append(s, v)
	}
	if u, err := url.Parse(ep.URL); err == nil {
		if p, ok := u.User.Password(); ok {
			s = append(s, p)
		}
		s = append(s, u.User.Username(), u.RawQuery)
	}
	out := s[:0]
	for _, v := range s {
		if len(v) >= 6 {
			out = append(out, v)
		}
	}
	return out
}
