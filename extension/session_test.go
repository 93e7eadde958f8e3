package extension

import (
	"fmt"
	"testing"
)

func show(effects []SessionEffect) string { return fmt.Sprintf("%v", effects) }

func TestSessionCloseCancelsEverythingOnce(t *testing.T) {
	var s Session
	s.Request(7)
	s.Request(3)
	s.Stream(5)
	s.Stream(2)
	s.RequestDone(7)
	if s.Refusal() != "" {
		t.Fatal("an open session refuses work")
	}
	got := show(s.Close())
	want := show([]SessionEffect{AbortRequest{ID: 3}, CancelStream{ID: 2}, CancelStream{ID: 5}, SignalDone{}, Unbind{}})
	if got != want {
		t.Fatalf("Close: %s, want %s", got, want)
	}
	if s.Refusal() == "" || len(s.Close()) != 0 || len(s.ConnEnded("gone")) != 0 {
		t.Fatal("a closed session took work, closed twice or ended after closing")
	}
	if e := s.StreamDone(2); len(e) != 0 {
		t.Fatalf("stopped with a stream still open: %v", e)
	}
	if got := show(s.StreamDone(5)); got != show([]SessionEffect{StopSession{}}) {
		t.Fatalf("last stream done: %s", got)
	}
}

func TestSessionConnEndedLosesStreams(t *testing.T) {
	var s Session
	s.Request(1)
	s.Stream(4)
	got := show(s.ConnEnded("the connection ended"))
	want := show([]SessionEffect{LoseStream{ID: 4, Why: "the connection ended"}, SignalDone{}})
	if got != want {
		t.Fatalf("ConnEnded: %s, want %s", got, want)
	}
	if r := s.Refusal(); r == "" || !s.Ended() {
		t.Fatal("an ended session takes work")
	}
	// Closing it afterwards cancels what is left but signals nothing new.
	if got := show(s.Close()); got != show([]SessionEffect{AbortRequest{ID: 1}, CancelStream{ID: 4}}) {
		t.Fatalf("Close after the end: %s", got)
	}
	if got := show(s.StreamDone(4)); got != show([]SessionEffect{StopSession{}}) {
		t.Fatalf("StreamDone: %s", got)
	}
}

func TestSessionWithNothingOpenStopsAtOnce(t *testing.T) {
	var a, b Session
	if got := show(a.Close()); got != show([]SessionEffect{SignalDone{}, Unbind{}, StopSession{}}) {
		t.Fatalf("Close: %s", got)
	}
	if got := show(b.ConnEnded("x")); got != show([]SessionEffect{SignalDone{}, StopSession{}}) {
		t.Fatalf("ConnEnded: %s", got)
	}
}
