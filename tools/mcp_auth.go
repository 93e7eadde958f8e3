package tools

import (
	"context"
	"encoding/json"

	"github.com/mcprt/mcprt/messages"
)

// AuthActions runs the proxy tool's OAuth actions for an agent whose person
// is elsewhere (seed 002): Start returns the authorization URL to open,
// Complete takes the redirect URL (or the code) pasted back. Neither may
// return a secret.
type AuthActions interface {
	Start(ctx context.Context, server string) (authURL string, err *messages.Error)
	Complete(ctx context.Context, server, pasted string) *messages.Error
}

// authArgs are auth-complete's args.
type authArgs struct {
	RedirectURL string `json:"redirectUrl"`
	Code        string `json:"code"`
}

// action runs {"action": ...}.
func (m *MCP) action(ctx context.Context, a *mcpArgs) Result {
	if a.Action != "auth-start" && a.Action != "auth-complete" {
		return failure(messages.Errorf(messages.KindInvalidArgs, "", "action %s is not supported (auth-start, auth-complete)", quote(a.Action)))
	}
	if a.Server == "" {
		return failure(messages.Errorf(messages.KindInvalidArgs, "", "%s needs a server: {\"action\": %s, \"server\": \"name\"}", a.Action, quote(a.Action)))
	}
	if err := m.configured(a.Server); err != nil {
		return failure(err)
	}
	if m.opts.Auth == nil {
		return failure(messages.Errorf(messages.KindInvalidArgs, a.Server, "OAuth actions are not available in this runtime"))
	}
	if a.Action == "auth-start" {
		u, err := m.opts.Auth.Start(ctx, a.Server)
		if err != nil {
			return failure(err)
		}
		return Result{
			Text: "Open this URL in a browser and approve. The browser is then sent to a localhost URL (the page may fail to load): " +
				"copy that whole URL from the address bar and call {\"action\": \"auth-complete\", \"server\": " + quote(a.Server) +
				", \"args\": {\"redirectUrl\": \"...\"}}.\n" + u,
			Details: map[string]any{"server": a.Server, "authorizationUrl": u},
		}
	}
	var args authArgs
	if len(a.Args) > 0 {
		raw := a.Args
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = json.RawMessage(s)
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			return failure(messages.Errorf(messages.KindInvalidArgs, a.Server, "auth-complete args must be {\"redirectUrl\": \"...\"} or {\"code\": \"...\"}"))
		}
	}
	pasted := args.RedirectURL
	if pasted == "" {
		pasted = args.Code
	}
	if pasted == "" {
		return failure(messages.Errorf(messages.KindInvalidArgs, a.Server, "auth-complete needs args {\"redirectUrl\": \"...\"} (or {\"code\": \"...\"})"))
	}
	if err := m.opts.Auth.Complete(ctx, a.Server, pasted); err != nil {
		return failure(err)
	}
	return Result{Text: "Authorized " + a.Server + ". Retry the call.", Details: map[string]any{"server": a.Server, "authorized": true}}
}
