package simtests

import (
	"strings"
	"testing"
	"testing/synctest"
	"unsafe"
)

// TestStreamWindow: a burst past a stream's window (actors.StreamWindow,
// 256 frames in flight) makes the simulated port wait for a credit, as a
// production reader does, and every frame still reaches the handler, in
// order, once the consumer has returned credits.
func TestStreamWindow(t *testing.T) {
	s, err := parseScript(`server alpha
----

start
----

register
----

session p1 alpha
----

stream x1 p1
----

frame alpha x1 times=300
----

status
----
`)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		var anchor byte
		w := NewWorld(0)
		w.Disp.Pin(uintptr(unsafe.Pointer(&anchor)))
		if _, err := runScript(w, s, false); err != nil {
			t.Fatal(err)
		}
		trace := w.Trace()
		if n := strings.Count(trace, "waiting for a credit"); n == 0 {
			t.Error("the port never waited for a credit")
		}
		if !strings.Contains(trace, "host x1 < notifications/sim/item x1 seq=300\n") {
			t.Errorf("frame 300 never reached the handler:\n%s", tail(trace, 20))
		}
		endBubble()
	})
}
