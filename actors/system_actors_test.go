package actors

import "testing"

// TestLiveActorsCountsOursOnly: a started system has actors (the root,
// servers, the events companion), and none once Close has returned.
func TestLiveActorsCountsOursOnly(t *testing.T) {
	s := startUnsent(t, &unsentPort{})
	if n := s.LiveActors(); n == 0 {
		t.Fatalf("a running system counts no live actor")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.LiveActors(); n != 0 {
		t.Fatalf("%d actor(s) alive after Close", n)
	}
}
