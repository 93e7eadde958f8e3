package actors

import (
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// batchActor owns one wakeup batcher (events or statuses): items come in
// prepared, a fixed window on the injected clock flushes them as one host
// message. After shutdown began (stopped), nothing is delivered.
type batchActor[T any] struct {
	env     *env
	b       *eventstream.Batcher[T]
	me      *actor.PID
	timer   timerSlot
	deliver func(messages.HostMessage)
	stopped *atomic.Bool
}

// batchAdd adds one prepared item; batchFlush is the window's timer;
// batchClear discards everything (shutdown).
type (
	batchAdd[T any] struct {
		item eventstream.Encoded[T]
		done func() // returns the frame's credit, if any
	}
	batchFlush struct{ token uint64 }
	batchClear struct{ reply func() }
)

func newBatchActor[T any](e *env, b *eventstream.Batcher[T], deliver func(messages.HostMessage), stopped *atomic.Bool) actor.Producer {
	return func() actor.Actor { return &batchActor[T]{env: e, b: b, deliver: deliver, stopped: stopped} }
}

func (a *batchActor[T]) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started:
		a.me = c.Self()
	case batchAdd[T]:
		if !a.stopped.Load() {
			a.exec(a.b.Add(m.item))
		}
		if m.done != nil {
			m.done()
		}
	case batchFlush:
		msg, ok := a.b.Fire(m.token)
		if ok && !a.stopped.Load() && a.deliver != nil {
			a.deliver(msg)
		}
	case batchClear:
		a.exec(a.b.Clear())
		m.reply()
	case *actor.Stopping:
		a.exec(a.b.Clear())
	}
}

func (a *batchActor[T]) exec(effects []eventstream.Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case eventstream.Arm:
			a.timer.arm(a.env, e.After, a.me, batchFlush{token: e.Token})
		case eventstream.Disarm:
			a.timer.stop()
		}
	}
}
