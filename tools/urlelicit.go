package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/messages"
)

// URLConsent asks the user to open a URL a server needs them to visit (a
// URL-mode elicitation that came as a tool call's -32042 error). It shows
// the server, the URL's host and the full URL, and reports whether the user
// agreed to go. It may block while the person decides.
type URLConsent func(ctx context.Context, server, message, rawURL, elicitationID string) bool

// urlElicitationRequired handles a call the server refused with -32042
// (URL elicitation required, 2025-11-25): each URL it names goes to the
// host's URLConsent, and the model reads that the user must complete a step
// at that server (its name and the URL's host, never the full URL) before
// the call can succeed. The call is not retried.
func (m *MCP) urlElicitationRequired(ctx context.Context, e *entry, err *messages.Error) (Result, bool) {
	if err.RPCCode != messages.RPCURLElicitationRequired {
		return Result{}, false
	}
	var data struct {
		Elicitations []struct {
			Mode          string `json:"mode"`
			URL           string `json:"url"`
			Message       string `json:"message"`
			ElicitationID string `json:"elicitationId"`
		} `json:"elicitations"`
	}
	_ = json.Unmarshal(err.RPCData, &data)
	var hosts []string
	asked, agreed := 0, 0
	for _, el := range data.Elicitations {
		u, perr := url.Parse(el.URL)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			continue
		}
		hosts = append(hosts, catalog.CleanText(u.Host))
		if m.opts.URLConsent != nil {
			asked++
			if m.opts.URLConsent(ctx, e.Server, el.Message, el.URL, el.ElicitationID) {
				agreed++
			}
		}
	}
	where := "a page"
	if len(hosts) > 0 {
		where = "a page on " + strings.Join(hosts, ", ")
	}
	text := fmt.Sprintf("Error: server %q needs the user to complete a step in the browser (%s) before %s can run.", e.Server, where, e.Name)
	switch {
	case asked == 0:
		text += " This host cannot show the user that page; the user must open it from the server's own instructions."
	case agreed == asked:
		text += " The user was asked to open it; call the tool again once they have finished."
	default:
		text += " The user declined to open it."
	}
	return Result{Text: text, IsError: true, Details: map[string]any{
		"error": "url_elicitation_required", "server": e.Server, "tool": e.Name, "hosts": hosts, "rpcCode": err.RPCCode,
	}}, true
}
