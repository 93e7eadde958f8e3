package transports

import (
	"encoding/json"
	"sync"

	"github.com/mcprt/mcprt/messages"
)

// openStream registers a stream's route before its request is written:
// correlated notifications go to the stream's sink in order, the server's
// notifications/cancelled for it ends it, and it reports once when its
// request is out (StreamSent).
func (c *conn) openStream(op messages.Op, st *opState) {
	id := st.reqID
	spec := op.Stream
	methods := make(map[string]bool, len(spec.Methods))
	for _, m := range spec.Methods {
		methods[m] = true
	}
	var once sync.Once
	st.sent = func() {
		once.Do(func() { spec.Sink(messages.StreamSent{Server: c.server, Gen: c.gen, ID: op.ID}) })
	}
	c.router.register(id, &route{
		methods: methods,
		deliver: func(method string, params json.RawMessage) {
			if spec.Credits != nil && !spec.Credits.Acquire(c.ctx.Done()) {
				return // the connection is closing
			}
			spec.Sink(messages.StreamNotification{Server: c.server, Gen: c.gen, ID: op.ID, Method: method, Params: params})
		},
		cancelled: func() { c.serverCancel(op, st) },
	})
}

// serverCancel ends a stream the server cancelled: it completes as
// ServerCancelled and nothing is sent back (the server knows).
func (c *conn) serverCancel(op messages.Op, st *opState) {
	c.mu.Lock()
	st.serverCancelled = true
	c.mu.Unlock()
	if c.lc != nil {
		if c.lc.abandon(st.key) {
			c.complete(op, st, messages.OpResult{Server: c.server, Gen: c.gen, ID: op.ID, ServerCancelled: true})
		}
		return
	}
	st.cancel() // HTTP: ends that request's response stream only
}
