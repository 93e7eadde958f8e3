package transports

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/internal/jsonscan"
	"github.com/mcprt/mcprt/messages"
)

// router is one connection's routing of stream notifications. A stream
// registers its request id (a string with the connection's prefix) before
// the request is written, so notifications the server sends before the
// write returns are routed too. A notification whose method the stream
// declared and whose params._meta carries the stream's id goes to that
// stream only, decoded no further than finding the id; one carrying our
// prefix but no live stream's id, with a method some stream of the
// connection declared, is a late frame of an ended stream and is dropped
// and counted; everything else continues to normal handling.
//
// Concurrency: claim is called by the connection's readers (one for stdio
// and sockets; one per response stream on HTTP) and register/unregister by
// request goroutines; a mutex guards the table. Delivery to one stream is
// in the order its frames were read.
type router struct {
	prefix string

	mu     sync.Mutex
	routes map[string]*route // by JSON-RPC id; guarded by mu
	// declared holds every method a stream of this connection declared:
	// only those count as late frames once their stream has ended.
	declared map[string]bool // guarded by mu

	late   atomic.Uint64
	onLate func() // reports each late frame
}

// route is one live stream.
type route struct {
	methods map[string]bool
	deliver func(method string, params json.RawMessage)
	// cancelled is called once if the server sends notifications/cancelled
	// for the stream.
	cancelled func()
}

func newRouter(prefix string, onLate func()) *router {
	return &router{prefix: prefix, routes: map[string]*route{}, declared: map[string]bool{}, onLate: onLate}
}

func (r *router) register(id string, rt *route) {
	r.mu.Lock()
	r.routes[id] = rt
	for m := range rt.methods {
		r.declared[m] = true
	}
	r.mu.Unlock()
}

func (r *router) unregister(id string) {
	r.mu.Lock()
	delete(r.routes, id)
	r.mu.Unlock()
}

var subscriptionKey = []byte(`"` + messages.SubscriptionIDKey + `"`)

// claim routes one notification and reports whether it was consumed (a
// stream's frame, a late frame, or the server cancelling a stream).
func (r *router) claim(method string, params json.RawMessage) bool {
	if method == "notifications/cancelled" {
		return r.serverCancelled(params)
	}
	if !bytes.Contains(params, subscriptionKey) {
		return false // the common case for ordinary notifications: no decoding
	}
	id, ok := idString(subscriptionID(params))
	if !ok || !strings.HasPrefix(id, r.prefix) {
		return false // not one of ours
	}
	r.mu.Lock()
	rt := r.routes[id]
	declared := r.declared[method]
	r.mu.Unlock()
	if rt == nil && !declared {
		return false // a method no stream declared: normal handling, as while it lived
	}
	if rt == nil {
		r.late.Add(1)
		if r.onLate != nil {
			r.onLate()
		}
		return true
	}
	if !rt.methods[method] {
		return false
	}
	rt.deliver(method, params)
	return true
}

// serverCancelled handles notifications/cancelled from the server: for a
// live stream of ours it ends the stream; anything else continues.
func (r *router) serverCancelled(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	id, ok := idString(p.RequestID)
	if !ok || !strings.HasPrefix(id, r.prefix) {
		return false
	}
	r.mu.Lock()
	rt := r.routes[id]
	delete(r.routes, id)
	r.mu.Unlock()
	if rt != nil && rt.cancelled != nil {
		rt.cancelled()
	}
	return true
}

// responded ends the route of a stream whose response has just been read,
// so that frames read after it count as late even before the request's
// goroutine completes it.
func (r *router) responded(rawID json.RawMessage) {
	id, ok := idString(rawID)
	if !ok || !strings.HasPrefix(id, r.prefix) {
		return
	}
	r.unregister(id)
}

// idString reads a JSON-RPC id that is a string (ours always are).
func idString(raw json.RawMessage) (string, bool) {
	return jsonscan.String(raw)
}

var (
	metaKeys         = []string{"_meta"}
	subscriptionKeys = []string{messages.SubscriptionIDKey}
)

// subscriptionID returns params._meta's subscription id, raw, as
// json.Unmarshal of params into {_meta: map[string]json.RawMessage} finds
// it; nil when there is none, when params or _meta is not an object, or
// when params is not valid JSON. jsonscan finds it without decoding; what
// it is not sure of goes through json.Unmarshal.
func subscriptionID(params []byte) []byte {
	if id, ok := scanSubscriptionID(params); ok {
		return id
	}
	return unmarshalSubscriptionID(params)
}

// unmarshalSubscriptionID is the reference for subscriptionID.
func unmarshalSubscriptionID(params []byte) []byte {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Meta[messages.SubscriptionIDKey]
}

// scanSubscriptionID is subscriptionID's fast path; false means "not sure".
func scanSubscriptionID(params []byte) ([]byte, bool) {
	var v [1][]byte
	if !jsonscan.Object(params, metaKeys, v[:]) {
		return nil, false
	}
	if meta := v[0]; meta == nil || meta[0] != '{' {
		return nil, true // absent, null (no map) or not an object (Unmarshal fails)
	}
	if !jsonscan.Object(v[0], subscriptionKeys, v[:]) {
		return nil, false
	}
	return v[0], true
}
