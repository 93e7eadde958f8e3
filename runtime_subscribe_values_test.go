package mcprt

import (
	"testing"
	"time"
)

// SubscribeOptionValues reports what FromCursor and MaxAge set (a
// shared runtime's session carries them to its member), nothing else.
func TestSubscribeOptionValues(t *testing.T) {
	if c, ok, age := SubscribeOptionValues(); c != "" || ok || age != nil {
		t.Fatalf("no options: %q %v %v", c, ok, age)
	}
	if c, ok, age := SubscribeOptionValues(FromCursor("")); c != "" || !ok || age != nil {
		t.Fatalf("an empty cursor is a cursor: %q %v %v", c, ok, age)
	}
	c, ok, age := SubscribeOptionValues(MaxAge(90*time.Second+1500*time.Microsecond), FromCursor("k"))
	if c != "k" || !ok || age == nil || *age != 90*time.Second+time.Millisecond {
		t.Fatalf("both: %q %v %v", c, ok, age)
	}
}
