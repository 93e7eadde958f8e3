package simtests

import (
	"log/slog"
	"reflect"
	"testing"
	"testing/synctest"
	"unsafe"

	"github.com/asynkron/protoactor-go/actor"
)

// TestGateHoldsPostsDuringAnActivation: an activation wakes a host
// goroutine, then posts (and yields there, as a preemption would); the host
// goroutine's post must wait for the activation to end, not land in the
// running mailbox ahead of the activation's own post.
func TestGateHoldsPostsDuringAnActivation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		growStack(2 * stackReserve / 4096)
		var anchor byte
		d := NewDispatcher(0)
		d.Pin(uintptr(unsafe.Pointer(&anchor)))
		d.Yield = true
		sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
		var got []string
		woken := make(chan struct{})
		pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if m, ok := c.Message().(string); ok {
				got = append(got, m)
				if m == "wake" {
					close(woken)                   // the host goroutine can run
					c.Send(c.Self(), "after-wake") // yields before it is queued
				}
			}
		}, actor.WithDispatcher(d), actor.WithMailbox(actor.Unbounded(d))))
		go func() {
			<-woken
			sys.Root.Send(pid, "host")
		}()
		sys.Root.Send(pid, "wake")
		for d.Step() {
		}
		synctest.Wait()
		for d.releaseNext() {
			synctest.Wait()
		}
		for d.Step() {
		}
		if want := []string{"wake", "after-wake", "host"}; !reflect.DeepEqual(got, want) {
			t.Errorf("the actor received %q, want %q", got, want)
		}
		if d.HeldMidStep() != 1 || d.Hazards() != 0 || d.StackMoved() != 0 {
			t.Errorf("held mid-step %d, hazards %d, stack moved %d; want 1, 0, 0", d.HeldMidStep(), d.Hazards(), d.StackMoved())
		}
		endBubble()
	})
}
