package transports

import (
	"context"
	"net/http"
)

// wrapAuth wraps an HTTP connection's round tripper with the server's
// authorization hook (Dialer.HTTPAuth), outside the frame limits: the hook
// may answer a 401 by authorizing and sending the request again, and the
// statuses recorded are those of what was finally sent.
func (d *Dialer) wrapAuth(server string, rt http.RoundTripper) http.RoundTripper {
	if d.HTTPAuth == nil {
		return rt
	}
	if wrap := d.HTTPAuth(server); wrap != nil {
		return wrap(rt)
	}
	return rt
}

// SecretValue resolves one configured secret value as the connection's
// own secrets are (see resolveSecrets): "!command" runs the command,
// "!!x" is the literal "!x", anything else is itself. OAuth uses it for
// oauth.clientSecret when it authenticates. Errors name the server and the
// field, never the command or its output.
func (d *Dialer) SecretValue(ctx context.Context, server, field, v string) (string, error) {
	out, err := d.secretValue(ctx, server, field, v)
	if err != nil {
		return "", err
	}
	return out, nil
}
