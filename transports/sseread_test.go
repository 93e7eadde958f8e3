package transports

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestSSEReader: the event-stream rules the clients rely on: data lines
// joined with newlines, CRLF line ends, the event name ("message" when
// none), an id counted only once its event is dispatched (a priming event
// without data counts too; one with NUL is ignored), retry in milliseconds,
// lines longer than the buffer, and an unfinished last event handed over
// before io.EOF without its id.
func TestSSEReader(t *testing.T) {
	long := strings.Repeat("x", 20<<10)
	stream := "id: prime\nretry: 250\ndata:\n\n" + // a priming event: no data, but its id counts
		"event: endpoint\r\ndata: /messages?s=1\r\n\r\n" +
		": a comment\ndata: a\ndata:  b\nid: e-2\n\n" +
		"id: bad\x00id\ndata: " + long + "\n\n" +
		"id: e-4\ndata: cut"
	type ev struct{ name, data, lastID string }
	want := []ev{
		{"endpoint", "/messages?s=1", "prime"},
		{"message", "a\n b", "e-2"},
		{"message", long, "e-2"},  // the id holding NUL is ignored
		{"message", "cut", "e-2"}, // unfinished: e-4 not counted
	}
	var cur sseCursor
	rd := newSSEReader(iotest.OneByteReader(strings.NewReader(stream)), &cur)
	defer rd.release()
	for i, w := range want {
		name, data, err := rd.next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if name != w.name || string(data) != w.data || cur.lastID != w.lastID {
			t.Errorf("event %d = %q %.40q (last id %q); want %q %.40q (%q)", i, name, data, cur.lastID, w.name, w.data, w.lastID)
		}
	}
	if _, _, err := rd.next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last event: %v, want io.EOF", err)
	}
	if !cur.hasRetry || cur.retry != 250*time.Millisecond {
		t.Errorf("retry = %v (%v), want 250ms", cur.retry, cur.hasRetry)
	}
}
