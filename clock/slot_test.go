package clock

import "testing"

func TestSlot(t *testing.T) {
	var s Slot
	if s.Fired(0) || s.Armed() {
		t.Fatal("an empty slot fired")
	}
	first := s.Arm()
	second := s.Arm() // re-armed: the first firing is stale
	if s.Fired(first) {
		t.Fatal("a replaced timer fired")
	}
	if !s.Fired(second) || s.Armed() {
		t.Fatal("the armed timer did not fire, or the slot stayed full")
	}
	if s.Fired(second) {
		t.Fatal("one timer fired twice")
	}
	third := s.Arm()
	if !s.Disarm() || s.Fired(third) {
		t.Fatal("a disarmed timer fired")
	}
	if s.Disarm() {
		t.Fatal("an empty slot disarmed")
	}
}
