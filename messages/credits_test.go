package messages

import "testing"

func TestCredits(t *testing.T) {
	c := NewCredits(2)
	if !c.TryAcquire() || !c.TryAcquire() {
		t.Fatal("two credits are not available")
	}
	if c.TryAcquire() {
		t.Fatal("a third credit was taken")
	}
	cancel := make(chan struct{})
	close(cancel)
	if c.Acquire(cancel) {
		t.Fatal("Acquire without a credit returned true on a closed cancel")
	}
	c.Release()
	if !c.Acquire(nil) {
		t.Fatal("a released credit was not available")
	}
	c.Release()
	c.Release()
	c.Release() // one too many: ignored
	if !c.TryAcquire() || !c.TryAcquire() || c.TryAcquire() {
		t.Fatal("an extra release changed the window")
	}
	c.Close()
	if !c.TryAcquire() || !c.Acquire(nil) {
		t.Fatal("Close did not lift the bound")
	}
}
