package eventsrv

import (
	"testing"
)

// TestCursors: the server's fast cursor encoding is cursor.String's, and
// parseCursor reads it back; foreign text is refused.
func TestCursors(t *testing.T) {
	s, err := New(Options{}, Type{Name: `odd "name" é`})
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{0, 7, 1 << 60} {
		want := cursor{epoch: s.epoch, name: `odd "name" é`, seq: seq}
		got := s.cursorAt(s.topics[0], seq)
		if got != want.String() {
			t.Fatalf("cursorAt %d = %q, want %q", seq, got, want.String())
		}
		if c, err := parseCursor(got); err != nil || c != want {
			t.Fatalf("parseCursor(%q) = %+v, %v", got, c, err)
		}
	}
	for _, bad := range []string{"", "!!", "WzEsMiwzXQ", "WyJhIiwiYiJd", "WyIiLCJhIiwxXQ"} {
		if c, err := parseCursor(bad); err == nil {
			t.Errorf("parseCursor(%q) = %+v", bad, c)
		}
	}
}
