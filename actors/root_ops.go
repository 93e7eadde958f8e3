package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// childFailed applies the restart policy to a crashed server actor. The
// message it was handling, when a caller waits on it, is failed first: the
// crashed instance can no longer answer it.
func (r *rootActor) childFailed(m childFailed) {
	name := m.rec.cfg.Name
	switch msg := m.message.(type) {
	case messages.Failable:
		msg.Fail(messages.Errorf(messages.KindInternal, name, "the server's actor crashed while handling this request"))
	case messages.DialResult:
		// The connection it brought would belong to no one: close it
		// (the restarted actor dials again when it needs one).
		if msg.Conn != nil {
			msg.Conn.Close()
		}
		// The restarted actor still waits for this dial's outcome: it
		// hears it as aborted (without the connection).
		m.rec.mu.Lock()
		pid := m.rec.pid
		m.rec.mu.Unlock()
		r.env.send(pid, messages.DialResult{Server: msg.Server, Gen: msg.Gen,
			Err: messages.Errorf(messages.KindAborted, name, "the server's actor crashed while handling this dial's result")})
	case *messages.QueryStatus, *messages.Shutdown, messages.ConnClosed, messages.OpResult:
		// No error fits them: the restarted actor answers them (the post
		// waits in its suspended mailbox until the restart); a ConnClosed
		// tells it that a connection the crashed one left closing is gone,
		// an OpResult that a request the crashed one sent is settled.
		m.rec.mu.Lock()
		pid := m.rec.pid
		m.rec.mu.Unlock()
		r.env.send(pid, msg)
	}
	now := r.env.clock.Now()
	m.rec.mu.Lock()
	if r.shuttingDown {
		// Restart it straight into the down state: it takes no new work,
		// and its crashed instance already answered the shutdown.
		m.rec.down = messages.Errorf(messages.KindShutdown, name, "the runtime is shutting down")
		pid := m.rec.pid
		m.rec.mu.Unlock()
		m.sup.RestartChildren(pid)
		return
	}
	decision, history := r.env.crashPolicy.Decide(messages.ActorServer, m.rec.crashes, now)
	m.rec.crashes = history
	m.rec.restarts++
	pid := m.rec.pid
	if decision.Down {
		m.rec.down = messages.Errorf(messages.KindServerFailed, name,
			"server actor crashed %d times within %s; kept down until an explicit connect", decision.Recent, r.policy.Window)
	}
	m.rec.mu.Unlock()
	r.env.reportCrash(messages.ActorServer, name, fmt.Sprintf("server %q's actor", name), m.reason, decision)
	if decision.Down {
		m.sup.RestartChildren(pid)
		return
	}
	if r.delayed == nil {
		r.delayed = map[*serverRecord]actor.Supervisor{}
	}
	r.delayed[m.rec] = m.sup
	if r.timers == nil {
		r.timers = map[*serverRecord]clock.Timer{}
	}
	r.timers[m.rec] = r.env.after(decision.Delay, r.env.root, restartChild{rec: m.rec, sup: m.sup})
}

// restart restarts a crashed server actor whose delay has passed, unless
// shutdown restarted it already.
func (r *rootActor) restart(rec *serverRecord) {
	sup, ok := r.delayed[rec]
	if !ok {
		return
	}
	delete(r.delayed, rec)
	if t := r.timers[rec]; t != nil {
		t.Stop() // shutdown restarts it before its delay
		delete(r.timers, rec)
	}
	rec.mu.Lock()
	pid := rec.pid
	rec.mu.Unlock()
	sup.RestartChildren(pid)
}

// shutdown starts the ordered shutdown.
func (r *rootActor) shutdown(c actor.Context, reply func()) {
	if r.shuttingDown {
		reply()
		return
	}
	r.shuttingDown = true
	r.shutdownReply = reply
	r.resumeEvents() // a crashed events actor is stopped below; no timer stays
	r.pending = len(r.records)
	if r.pending == 0 {
		r.stopChildren(c)
		return
	}
	// A crashed actor waiting for its restart delay would answer the
	// Shutdown only after it: restart it now, straight into the down
	// state (it takes no new work).
	for _, rec := range r.records {
		if _, ok := r.delayed[rec]; ok {
			rec.mu.Lock()
			rec.down = messages.Errorf(messages.KindShutdown, rec.cfg.Name, "the runtime is shutting down")
			rec.mu.Unlock()
			r.restart(rec)
		}
	}
	self := c.Self()
	for _, rec := range r.records {
		name := rec.cfg.Name
		rec.mu.Lock()
		pid := rec.pid
		rec.mu.Unlock()
		c.Send(pid, &messages.Shutdown{Reply: func() { r.env.send(self, serverShutdownDone{name: name}) }})
	}
}

// stopChildren stops every server actor once they have all closed their
// connections; the shutdown reply runs when the last one has terminated.
func (r *rootActor) stopChildren(c actor.Context) {
	r.watching = len(r.records) + len(r.also)
	for _, pid := range r.also {
		c.Watch(pid)
		c.Stop(pid)
	}
	if r.watching == 0 {
		reply := r.shutdownReply
		r.shutdownReply = nil
		reply()
		return
	}
	for _, rec := range r.records {
		rec.mu.Lock()
		pid := rec.pid
		rec.mu.Unlock()
		c.Watch(pid)
		c.Stop(pid)
	}
}
