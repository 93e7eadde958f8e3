package transports

import "net/http"

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
