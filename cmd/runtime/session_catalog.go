package main

import (
	"context"
	"encoding/json"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// serverParams are the params of the methods that name a server only.
type serverParams struct {
	Server string `json:"server"`
}

// catalogMethods are the sidecar's typed catalog, resources and
// subscriptions (docs/sidecar.md).
var catalogMethods = map[string]sessionMethod{
	"serverResources": func(_ context.Context, s *session, params json.RawMessage) (any, error) {
		p, err := serverOf(params)
		if err != nil {
			return nil, err
		}
		items, ok := s.rt.ServerResources(p.Server)
		return listed(p.Server, items, ok)
	},
	"serverTemplates": func(_ context.Context, s *session, params json.RawMessage) (any, error) {
		p, err := serverOf(params)
		if err != nil {
			return nil, err
		}
		items, ok := s.rt.ServerTemplates(p.Server)
		return listed(p.Server, items, ok)
	},
	"serverPrompts": func(_ context.Context, s *session, params json.RawMessage) (any, error) {
		p, err := serverOf(params)
		if err != nil {
			return nil, err
		}
		items, ok := s.rt.ServerPrompts(p.Server)
		return listed(p.Server, items, ok)
	},
	"readResource": func(ctx context.Context, s *session, params json.RawMessage) (any, error) {
		var p struct {
			Server    string         `json:"server"`
			URI       string         `json:"uri"`
			Template  string         `json:"template"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		if p.Server == "" || (p.URI == "") == (p.Template == "") {
			return nil, messages.Errorf(messages.KindInvalidArgs, "", `readResource needs params {"server": NAME, "uri": URI} or {"server": NAME, "template": T, "arguments": {...}}`)
		}
		var res *mcprt.ReadResult
		var err error
		if p.URI != "" {
			res, err = s.rt.ReadResource(ctx, p.Server, p.URI)
		} else {
			res, err = s.rt.ReadTemplate(ctx, p.Server, p.Template, p.Arguments)
		}
		if err != nil {
			return nil, err
		}
		contents := make([]json.RawMessage, 0, len(res.Contents))
		for _, c := range res.Contents {
			contents = append(contents, c.Raw)
		}
		return map[string]any{"contents": contents}, nil
	},
	"subscribe": func(ctx context.Context, s *session, params json.RawMessage) (any, error) {
		var p struct {
			Server    string         `json:"server"`
			Event     string         `json:"event"`
			Arguments map[string]any `json:"arguments"`
			Cursor    *string        `json:"cursor"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		if p.Server == "" || p.Event == "" {
			return nil, messages.Errorf(messages.KindInvalidArgs, "", `subscribe needs params {"server": NAME, "event": NAME}`)
		}
		var opts []mcprt.SubscribeOption
		if p.Cursor != nil {
			opts = append(opts, mcprt.FromCursor(*p.Cursor))
		}
		// The subscription lives as long as the session (or until
		// unsubscribe); cancelling the request aborts the subscribe only.
		life, end := context.WithCancel(s.ctx)
		detach := context.AfterFunc(ctx, end)
		sub, err := s.subscribeTyped(life, p.Server, p.Event, p.Arguments, opts...)
		if !detach() || err != nil {
			end()
			if err == nil {
				sub.Stop()
				err = messages.Errorf(messages.KindAborted, p.Server, "cancelled by the host")
			}
			return nil, err
		}
		s.mu.Lock()
		s.subs[sub.ID()] = sub
		s.mu.Unlock()
		return map[string]any{"subscription": sub.ID(), "cursor": sub.Cursor()}, nil
	},
	"unsubscribe": func(_ context.Context, s *session, params json.RawMessage) (any, error) {
		var p struct {
			Subscription string `json:"subscription"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		s.mu.Lock()
		sub := s.subs[p.Subscription]
		delete(s.subs, p.Subscription)
		s.mu.Unlock()
		if sub == nil {
			return nil, messages.Errorf(messages.KindInvalidArgs, "", "no subscription %q of this session", p.Subscription)
		}
		sub.Stop()
		return map[string]any{"stopped": true}, nil
	},
}

// deliverTyped writes a typed subscription's delivery as an {"event"} or a
// {"subscriptionStatus"} line; like a deliver line, it waits at most 5 s
// for room in the output queue, then counts as dropped.
func (s *session) deliverTyped(d mcprt.Delivery) {
	if e := d.Event; e != nil {
		line := map[string]any{"subscription": e.Subscription, "server": e.Server, "name": e.Name, "id": e.ID,
			"timestamp": e.Timestamp, "cursor": e.Cursor, "data": e.Data}
		if e.ReplayTruncated {
			line["replayTruncated"] = true
		}
		s.out.offer(map[string]any{"event": line})
		return
	}
	st := d.Status
	line := map[string]any{"subscription": st.Subscription, "server": st.Server, "name": st.Name, "state": st.State, "cursor": st.Cursor}
	if st.Truncated {
		line["truncated"] = true
	}
	if st.Error != "" {
		line["error"] = st.Error
	}
	if st.EndReason != "" {
		line["endReason"] = st.EndReason
	}
	s.out.offer(map[string]any{"subscriptionStatus": line})
}

// serverOf decodes {"server": NAME}, which is required.
func serverOf(params json.RawMessage) (serverParams, error) {
	var p serverParams
	if err := decodeParams(params, &p); err != nil {
		return p, err
	}
	if p.Server == "" {
		return p, messages.Errorf(messages.KindInvalidArgs, "", `this method needs params {"server": NAME}`)
	}
	return p, nil
}

// listed answers a catalog list, or an error when the server's catalog was
// never listed.
func listed[T any](server string, items []T, ok bool) (any, error) {
	if !ok {
		return nil, messages.Errorf(messages.KindInvalidArgs, server, "the catalog of %q is not listed yet (connect it first)", server)
	}
	if items == nil {
		items = []T{}
	}
	return items, nil
}
