package actors

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// A subscription publishes its snapshot (cursor, counters) before it hands
// an event or a status to a batcher: a host woken by that batch who then
// lists the subscription sees the cursor of the event it got, whatever the
// scheduler does in between (TestEventsRouting failed once under load:
// the batch was delivered, and listed, before the subscription actor's
// turn reached its publish).
func TestSubscriptionPublishesBeforeDelivering(t *testing.T) {
	ctx := testkit.Ctx(t)
	system := actor.NewActorSystem()
	e := &env{system: system, clock: clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	sub, err := eventstream.NewSubscription(eventstream.Spec{ID: "sub-1", Server: "ev", Name: "fs.changed"}, eventstream.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pub := &published{}
	type seen struct {
		cursor    string
		delivered uint64
	}
	got := make(chan seen, 4)
	batcher := system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(batchAdd[*eventstream.EventItem]); ok {
			s := seen{delivered: pub.delivered.Load()}
			if p := pub.snap.Load(); p != nil {
				s.cursor = p.Cursor.String()
			}
			got <- s
		}
	}))
	defer system.Root.Stop(batcher)
	a := newSubState(e, nil, batchPIDs{events: batcher}, nil, sub, eventstream.Spec{}, pub, nil)
	sub.Start()
	sub.Frame(e.clock.Now(), 1, eventstream.Decode(eventstream.MethodActive, json.RawMessage(`{"cursor":"c0"}`)))
	// exec alone, outside Receive (whose end publishes too): what the
	// batcher sees is what exec published before sending.
	a.exec(sub.Frame(e.clock.Now(), 1, eventstream.Decode(eventstream.MethodEvent, json.RawMessage(
		`{"eventId":"e1","name":"fs.changed","timestamp":"2026-01-01T00:00:00Z","cursor":"c1","data":{"path":"a"}}`))))
	select {
	case s := <-got:
		if s.cursor != "c1" || s.delivered != 1 {
			t.Fatalf("the batcher got the event while the published snapshot said cursor %q, %d delivered; want c1, 1", s.cursor, s.delivered)
		}
	case <-ctx.Done():
		t.Fatal("the event never reached the batcher")
	}
}
