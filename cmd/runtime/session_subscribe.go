package main

import (
	"context"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/remote"
)

// typedSubscription is a host's typed subscription as the sidecar holds
// it: the embedded runtime's (*mcprt.Subscription) or, attached, the
// shared runtime's through the session (*remote.Subscription).
type typedSubscription interface {
	ID() string
	Cursor() string
	Stop()
}

// subscribeTyped subscribes through the sidecar's runtime, embedded or
// attached; deliveries become {"event"} and {"subscriptionStatus"} lines.
func (s *session) subscribeTyped(ctx context.Context, server, event string, args any, opts ...mcprt.SubscribeOption) (typedSubscription, error) {
	if s.local != nil {
		sub, err := s.local.Subscribe(ctx, server, event, args, s.deliverTyped, opts...)
		if err != nil {
			return nil, err
		}
		return sub, nil
	}
	if rs, ok := s.rt.(*remote.Session); ok {
		sub, err := rs.Subscribe(ctx, server, event, args, s.deliverTyped, opts...)
		if err != nil {
			return nil, err
		}
		return sub, nil
	}
	return nil, messages.Errorf(messages.KindInvalidArgs, server, "this runtime offers no typed subscriptions")
}
