package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// batchActor owns one wakeup batcher (events or statuses): items come in
// prepared, a fixed window on the injected clock flushes them as one host
// message. After shutdown began (stopped), nothing is delivered. What it
// keeps is its batchState, which outlives a crash: a restarted batcher
// still holds the pending batch and its window, and counts a batch whose
// delivery crashed (the host's Deliver panicked) in the next batch's
// dropped count.
type batchActor[T any] struct{ *batchState[T] }

// batchState is a batcher actor's state; the events actor keeps it.
type batchState[T any] struct {
	env     *env
	b       *eventstream.Batcher[T]
	me      *actor.PID
	timer   timerSlot
	deliver func(messages.HostMessage)
	stopped *atomic.Bool
	// delivering is the number of items of the batch being handed to the
	// host, while Deliver runs.
	delivering int
	crash      crashNote
}

// batchAdd adds one prepared item; batchFlush is the window's timer;
// batchClear discards everything (shutdown); batchDrop counts items that
// could not be added.
type (
	batchAdd[T any] struct {
		item eventstream.Encoded[T]
		done func() // returns the frame's credit, if any
	}
	batchFlush struct{ token uint64 }
	batchClear struct{ reply func() }
)

func newBatchActor[T any](e *env, b *eventstream.Batcher[T], deliver func(messages.HostMessage), stopped *atomic.Bool) (actor.Producer, *batchState[T]) {
	st := &batchState[T]{env: e, b: b, deliver: deliver, stopped: stopped}
	return func() actor.Actor { return &batchActor[T]{st} }, st
}

func (a *batchActor[T]) Receive(c actor.Context) {
	msg := c.Message()
	defer func() {
		if r := recover(); r != nil {
			a.crash.note(r)
			if !lifecycleMessage(msg) {
				c.Stash() // the restarted batcher takes it again, first
			}
			panic(r)
		}
	}()
	a.env.maybeCrash(messages.ActorBatcher, msg)
	switch m := msg.(type) {
	case *actor.Started:
		a.me = c.Self()
		if a.delivering > 0 {
			// Restarted after its delivery crashed: those items are told
			// as dropped in the next batch, never lost silently.
			n := a.delivering
			a.delivering = 0
			if !a.stopped.Load() {
				a.exec(a.b.AddDropped(n))
			}
		}
	case batchAdd[T]:
		if !a.stopped.Load() {
			a.exec(a.b.Add(m.item))
		}
		if m.done != nil {
			m.done()
		}
	case batchFlush:
		items, _ := a.b.Pending()
		wake, ok := a.b.Fire(m.token)
		if ok && !a.stopped.Load() && a.deliver != nil {
			a.delivering = items
			a.deliver(wake)
			a.delivering = 0
		}
	case batchClear:
		a.exec(a.b.Clear())
		m.reply()
	case *actor.Stopping:
		a.exec(a.b.Clear())
	}
}

func (a *batchState[T]) exec(effects []eventstream.Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case eventstream.Arm:
			a.timer.arm(a.env, e.After, a.me, batchFlush{token: e.Token})
		case eventstream.Disarm:
			a.timer.stop()
		}
	}
}
