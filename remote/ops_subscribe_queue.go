package remote

import (
	"slices"
	"strconv"

	mcprt "github.com/mcprt/mcprt"
)

// A typed subscription's queue on the member (ops_subscribe.go): the
// runtime's handler queues, one drain at a time sends, in order.

// deliver is the subscription's handler on the member: it queues the
// delivery for the session and returns at once.
func (t *typedSub) deliver(d mcprt.Delivery) {
	final := d.Status != nil && (d.Status.State == "ended" || d.Status.State == "failed")
	t.mu.Lock()
	if t.halted || t.final {
		if !t.halted {
			t.late++
		}
		t.mu.Unlock()
		return
	}
	size := 0
	if d.Event != nil {
		size = len(d.Event.Data)
	}
	overrun := !final && len(t.queue) > 0 && (len(t.queue) >= maxTypedBacklog || t.bytes+size > maxTypedBacklogBytes)
	waited, waitedBytes := len(t.queue), t.bytes
	if overrun {
		d, size = t.overrunLocked(d), 0
		final = true
	} else if d.Event != nil {
		t.cursor = d.Event.Cursor
	}
	t.queue = append(t.queue, d)
	t.bytes += size
	t.final = final
	kick := t.adopted && !t.sending
	if kick {
		t.sending = true
	}
	t.mu.Unlock()
	if overrun {
		t.a.srv.logger.Warn("remote: a session did not take its typed subscription's deliveries; it was ended",
			"session", t.a.self.Id, "subscription", d.Status.Subscription, "waiting", waited, "bytes", waitedBytes)
		t.end()
	}
	if final {
		t.a.srv.n.sys.Root.Send(t.a.self, typedGone{t: t})
	}
	if kick {
		t.kick()
	}
}

// overrunLocked is the final status of a subscription whose session did
// not keep up, in place of delivery d (not sent). t.mu is held.
func (t *typedSub) overrunLocked(d mcprt.Delivery) mcprt.Delivery {
	st := &mcprt.SubscriptionStatus{State: "failed", EndReason: "overrun"}
	if e := d.Event; e != nil {
		st.Subscription, st.Server, st.Name = e.Subscription, e.Server, e.Name
	} else if d.Status != nil {
		st.Subscription, st.Server, st.Name = d.Status.Subscription, d.Status.Server, d.Status.Name
	}
	st.Cursor = t.cursor
	st.Error = "the session did not take this subscription's deliveries in time (" + strconv.Itoa(len(t.queue)) +
		" deliveries of " + strconv.Itoa(t.bytes) + " bytes waited): the member ended it; subscribe again from its last cursor to go on"
	t.late++
	return mcprt.Delivery{Status: st}
}

// adopt lets the deliveries leave (the session has the reply); false when
// the subscription ended on its own meanwhile (its final status leaves
// too, and the actor forgets it).
func (t *typedSub) adopt() bool {
	t.mu.Lock()
	t.adopted = true
	kick := len(t.queue) > 0 && !t.sending
	if kick {
		t.sending = true
	}
	final := t.final
	t.mu.Unlock()
	if kick {
		t.kick()
	}
	return !final
}

// kick starts the drain (t.sending is set).
func (t *typedSub) kick() {
	if !t.a.srv.pool.run(t.drain) { // the member is closing
		t.mu.Lock()
		t.sending = false
		t.mu.Unlock()
	}
}

// drain sends what is queued, in order, until nothing is.
func (t *typedSub) drain() {
	for {
		t.mu.Lock()
		if t.halted || len(t.queue) == 0 {
			t.sending = false
			t.mu.Unlock()
			return
		}
		n, size := 0, 0
		for n < len(t.queue) && n < maxTypedBatch {
			next := 0
			if e := t.queue[n].Event; e != nil {
				next = len(e.Data)
			}
			if n > 0 && size+next > maxTypedBatchBytes {
				break
			}
			size += next
			n++
		}
		batch := slices.Clone(t.queue[:n])
		t.queue = slices.Delete(t.queue, 0, n)
		t.bytes -= size
		t.mu.Unlock()
		// On the session's link, as its replies (after the subscribe's):
		// a session that stops reading holds only this drain, until its
		// timeout aborts the write.
		t.a.reply(&typedMsg{Key: t.key, Deliveries: batch})
	}
}

// halt stops sending: the session stopped the subscription or ended.
func (t *typedSub) halt() {
	t.mu.Lock()
	t.halted, t.queue, t.bytes = true, nil, 0
	t.mu.Unlock()
}

// stop ends the subscription on the wire and returns once it has.
func (t *typedSub) stop() {
	t.halt()
	t.mu.Lock()
	h := t.handle
	t.mu.Unlock()
	if h != nil {
		h.Stop()
	}
	t.end()
}
