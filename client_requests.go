package mcprt

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/clientside"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/tools"
)

// clientSide answers servers' requests with the host's hooks (client.go).
type clientSide struct {
	// asked counts, per server, the questions put to the user (a
	// *atomic.Uint64 by server name), so a call can say it waited for one.
	asked sync.Map
	hooks ClientHooks
	rt    *Runtime
	mu    sync.Mutex
	roots []Root // guarded by mu
}

func newClientSide(rt *Runtime, hooks ClientHooks) *clientSide {
	return &clientSide{hooks: hooks, rt: rt, roots: append([]Root(nil), hooks.Roots...)}
}

// rooted reports whether a roots capability is advertised: the host gave
// roots (possibly none) at Start.
func (c *clientSide) rooted() bool { return c.hooks.Roots != nil || c.hooks.ListRoots != nil }

// capabilities is the client capabilities object the hooks allow.
func (c *clientSide) capabilities() json.RawMessage {
	caps := map[string]any{}
	elicit := map[string]any{}
	if c.hooks.Elicit != nil {
		elicit["form"] = map[string]any{}
	}
	if c.hooks.ElicitURL != nil {
		elicit["url"] = map[string]any{}
	}
	if len(elicit) > 0 {
		caps["elicitation"] = elicit
	}
	if c.hooks.Sample != nil {
		sampling := map[string]any{}
		if c.hooks.SamplingSupport.Tools {
			sampling["tools"] = map[string]any{}
		}
		caps["sampling"] = sampling
	}
	if c.rooted() {
		caps["roots"] = map[string]any{"listChanged": true}
	}
	b, _ := json.Marshal(caps)
	return b
}

func rpcErr(code int, format string, args ...any) *messages.RPCError {
	return &messages.RPCError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// serve answers one server request (messages.ServerRequestHandler).
func (c *clientSide) serve(ctx context.Context, req messages.ServerRequest) (json.RawMessage, *messages.RPCError) {
	if req.Caller != nil {
		ctx = messages.WithCaller(ctx, req.Caller) // the hooks may ask CallerOf
	}
	switch req.Method {
	case messages.MethodElicit:
		return c.elicit(ctx, req)
	case messages.MethodSample:
		return c.sample(ctx, req)
	case messages.MethodListRoots:
		if list := c.hooks.ListRoots; list != nil {
			roots, err := list(ctx, req.Server)
			if err != nil {
				return nil, rpcErr(messages.RPCInternal, "listing the roots failed: %s", oneLineErr(err))
			}
			if roots == nil {
				roots = []Root{}
			}
			b, _ := json.Marshal(map[string]any{"roots": roots})
			return b, nil
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.rooted() {
			return nil, rpcErr(messages.RPCMethodNotFound, "this client offers no roots")
		}
		roots := c.roots
		if roots == nil {
			roots = []Root{}
		}
		b, _ := json.Marshal(map[string]any{"roots": roots})
		return b, nil
	}
	return nil, rpcErr(messages.RPCMethodNotFound, "method %q is not supported by this client", req.Method)
}

type elicitParams struct {
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	URL             string          `json:"url"`
	ElicitationID   string          `json:"elicitationId"`
	Task            json.RawMessage `json:"task"`
}

func (c *clientSide) elicit(ctx context.Context, req messages.ServerRequest) (json.RawMessage, *messages.RPCError) {
	var p elicitParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		if f := clientside.WireField(err, ""); f != "" {
			return nil, rpcErr(messages.RPCInvalidParams, "params.%s: not of the elicitation/create shape", f)
		}
		return nil, rpcErr(messages.RPCInvalidParams, "params: not an object of the elicitation/create shape")
	}
	if len(p.Task) > 0 && string(p.Task) != "null" {
		return nil, rpcErr(messages.RPCInvalidParams, "params.task: task-augmented requests are not supported by this client")
	}
	switch p.Mode {
	case "", "form":
		if c.hooks.Elicit == nil {
			return nil, rpcErr(messages.RPCMethodNotFound, "form-mode elicitation is not supported by this client")
		}
		form, err := clientside.ParseForm(p.RequestedSchema)
		if err != nil {
			return nil, rpcErr(messages.RPCInvalidParams, "params.requestedSchema: %s", strings.TrimPrefix(err.Error(), "requested schema: "))
		}
		ans, herr := c.waitForPerson(ctx, req.Server, func() (ElicitAnswer, error) {
			return c.hooks.Elicit(ctx, ElicitForm{Server: req.Server, Message: p.Message, Form: form})
		})
		if herr != nil {
			return nil, herr
		}
		return c.formAnswer(req.Server, form, ans)
	case "url":
		if c.hooks.ElicitURL == nil {
			return nil, rpcErr(messages.RPCMethodNotFound, "URL-mode elicitation is not supported by this client")
		}
		u, err := clientside.ParseElicitURL(p.URL)
		if err != nil {
			return nil, rpcErr(messages.RPCInvalidParams, "params.url: %s", err)
		}
		ans, herr := c.waitForPerson(ctx, req.Server, func() (ElicitAnswer, error) {
			return c.hooks.ElicitURL(ctx, ElicitURL{Server: req.Server, Message: p.Message, URL: u.URL, Host: u.Host, ElicitationID: p.ElicitationID})
		})
		if herr != nil {
			return nil, herr
		}
		return actionOnly(ans.Action)
	}
	return nil, rpcErr(messages.RPCInvalidParams, "params.mode: %q is neither form nor url", p.Mode)
}

// waitForPerson runs a hook that asks a person, with the server's call
// deadlines standing still meanwhile.
func (c *clientSide) waitForPerson(ctx context.Context, server string, ask func() (ElicitAnswer, error)) (ElicitAnswer, *messages.RPCError) {
	c.rt.sys.Post(server, messages.UserWait{Server: server, Delta: 1})
	defer c.rt.sys.Post(server, messages.UserWait{Server: server, Delta: -1})
	n, _ := c.asked.LoadOrStore(server, new(atomic.Uint64))
	n.(*atomic.Uint64).Add(1)
	ans, err := ask()
	if err != nil {
		if ctx.Err() != nil {
			return ElicitAnswer{}, rpcErr(messages.RPCInternal, "the request was withdrawn")
		}
		return ElicitAnswer{}, rpcErr(messages.RPCInternal, "the host could not ask the user: %s", oneLineErr(err))
	}
	return ans, nil
}

// formAnswer checks an accepted answer against the form and fills the
// defaults; an answer that does not fit is not sent: the server is told the
// user cancelled, and the host hears why.
func (c *clientSide) formAnswer(server string, form clientside.Form, ans ElicitAnswer) (json.RawMessage, *messages.RPCError) {
	if ans.Action != ElicitAccept {
		return actionOnly(ans.Action)
	}
	content, err := form.Complete(ans.Content)
	if err != nil {
		c.rt.host.notify(context.Background(), messages.Notice{Level: messages.NoticeWarning, Server: server,
			Text: "the elicitation answer was not sent: " + err.Error()})
		return actionOnly(ElicitCancel)
	}
	b, _ := json.Marshal(map[string]any{"action": ElicitAccept, "content": content})
	return b, nil
}

func actionOnly(a ElicitAction) (json.RawMessage, *messages.RPCError) {
	switch a {
	case ElicitAccept, ElicitDecline, ElicitCancel:
	default:
		a = ElicitCancel
	}
	b, _ := json.Marshal(map[string]any{"action": a})
	return b, nil
}

func (c *clientSide) sample(ctx context.Context, req messages.ServerRequest) (json.RawMessage, *messages.RPCError) {
	if c.hooks.Sample == nil {
		return nil, rpcErr(messages.RPCMethodNotFound, "sampling is not supported by this client")
	}
	q, err := clientside.ParseSampling(req.Params, c.hooks.SamplingSupport)
	if err != nil {
		if _, ok := err.(*clientside.ParamsError); ok {
			return nil, rpcErr(messages.RPCInvalidParams, "%s", err)
		}
		return nil, rpcErr(messages.RPCInternal, "%s", err)
	}
	res, herr := c.hooks.Sample(ctx, SamplingRequest{Server: req.Server, SamplingRequest: q})
	if herr != nil {
		return nil, rpcErr(messages.RPCInternal, "sampling failed: %s", oneLineErr(herr))
	}
	stop := res.StopReason
	if stop == "" {
		stop = "endTurn"
	}
	model := res.Model
	if model == "" {
		model = "unknown"
	}
	b, _ := json.Marshal(map[string]any{
		"role": "assistant", "content": map[string]any{"type": "text", "text": res.Text}, "model": model, "stopReason": stop,
	})
	return b, nil
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// note hands the host a notification meant for it.
func (c *clientSide) note(n messages.ClientNote) {
	switch n.Method {
	case "notifications/progress":
		if c.hooks.Progress == nil {
			return
		}
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
			Total    float64         `json:"total"`
			Message  string          `json:"message"`
		}
		if json.Unmarshal(n.Params, &p) != nil {
			return
		}
		token := strings.Trim(string(p.Token), `"`)
		var caller any
		if c.rt != nil && c.rt.mcp != nil {
			caller = c.rt.mcp.ProgressCaller(token)
		}
		c.hooks.Progress(Progress{Server: n.Server, Token: token, Progress: p.Progress, Total: p.Total, Message: p.Message, Caller: caller})
	case "notifications/message":
		var p struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		if json.Unmarshal(n.Params, &p) != nil {
			return
		}
		c.rt.logger.Log(context.Background(), slogLevel(p.Level), "server log", "server", n.Server, "level", p.Level, "logger", p.Logger, "data", string(p.Data))
	case "notifications/elicitation/complete":
		var p struct {
			ID string `json:"elicitationId"`
		}
		if c.hooks.ElicitationComplete != nil && json.Unmarshal(n.Params, &p) == nil {
			c.hooks.ElicitationComplete(n.Server, p.ID)
		}
	}
}

// slogLevel maps an MCP log level onto the host logger's levels.
func slogLevel(level string) slog.Level {
	switch level {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	}
	return slog.LevelError // error, critical, alert, emergency, and anything unknown
}

// SetRoots replaces the roots servers may work in and tells every
// connected server (notifications/roots/list_changed). It has no effect
// when Options.Client.Roots was nil at Start: no roots capability was
// advertised.
func (r *Runtime) SetRoots(roots []Root) {
	c := r.client
	c.mu.Lock()
	if !c.rooted() {
		c.mu.Unlock()
		return
	}
	c.roots = append([]Root{}, roots...)
	c.mu.Unlock()
	for _, s := range r.sys.Names() {
		r.sys.Post(s, messages.ClientNotify{Method: "notifications/roots/list_changed"})
	}
}

// urlConsent adapts the host's ElicitURL hook to a tool call's -32042
// error: the URL is checked as an elicitation's would be, and only an
// accept counts as consent.
func urlConsent(h ClientHooks) tools.URLConsent {
	if h.ElicitURL == nil {
		return nil
	}
	return func(ctx context.Context, server, message, rawURL, id string) bool {
		u, err := clientside.ParseElicitURL(rawURL)
		if err != nil {
			return false
		}
		ans, err := h.ElicitURL(ctx, ElicitURL{Server: server, Message: message, URL: u.URL, Host: u.Host, ElicitationID: id})
		return err == nil && ans.Action == ElicitAccept
	}
}

// askedCount is how many questions server has put to the user so far.
func (c *clientSide) askedCount(server string) uint64 {
	if n, ok := c.asked.Load(server); ok {
		return n.(*atomic.Uint64).Load()
	}
	return 0
}
