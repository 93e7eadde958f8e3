package mcpserve

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// listener is one open subscriptions/listen request (2026-07-28): the list
// changes it asked for, and its channel.
type listener struct {
	id    json.RawMessage
	kinds int // kindTools, kindResources, kindPrompts
	out   func(msg []byte) error
}

// send writes a notification on the listen request's channel, stamped with
// its id in params._meta.
func (l *listener) send(method string, params map[string]any) error {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{mcp.MetaKeySubscriptionID: l.id}
	msg, err := notification(method, params)
	if err != nil {
		return err
	}
	return l.out(msg)
}

// listen serves subscriptions/listen: the list changes asked for that the
// server offers (listChanged declared; resource subscriptions are not
// offered) are acknowledged with notifications/subscriptions/acknowledged,
// then sent on the request until the client ends it (its context), when
// the request is answered. With nothing to offer it is answered at once,
// after the acknowledgement.
func (s *Server) listen(ctx context.Context, c *call, params json.RawMessage) (any, *rpcError) {
	var p mcp.SubscriptionsListenParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, errorf(mcp.INVALID_PARAMS, "subscriptions/listen params: %v", err)
	}
	var allowed mcp.SubscriptionFilter
	l := &listener{id: c.id, out: c.out}
	caps := s.capabilities()
	if p.Notifications.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged {
		allowed.ToolsListChanged, l.kinds = true, l.kinds|kindTools
	}
	if p.Notifications.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged {
		allowed.ResourcesListChanged, l.kinds = true, l.kinds|kindResources
	}
	if p.Notifications.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged {
		allowed.PromptsListChanged, l.kinds = true, l.kinds|kindPrompts
	}
	if l.kinds != 0 {
		s.mu.Lock()
		s.listeners[l] = true
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.listeners, l)
			s.mu.Unlock()
		}()
	}
	if err := l.send(mcp.MethodNotificationSubscriptionsAcknowledged, map[string]any{"notifications": allowed}); err != nil {
		return nil, errorf(mcp.INTERNAL_ERROR, "cannot acknowledge the subscription: %v", err)
	}
	if l.kinds != 0 {
		<-ctx.Done()
	}
	r := &mcp.SubscriptionsListenResult{}
	r.EnsureResultMeta().SetSubscriptionID(c.id)
	return r, nil
}
