package transports

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// chunkReader returns its input a few bytes at a time, so events straddle
// reads.
type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := min(c.n, len(c.s), len(p))
	copy(p, c.s[:k])
	c.s = c.s[k:]
	return k, nil
}

func (c *chunkReader) Close() error { return nil }

func TestSSETapRoutesAndBounds(t *testing.T) {
	r := newRouter("mcprt-x-", nil)
	var routed []string
	r.register("mcprt-x-1", &route{methods: map[string]bool{"notifications/events/event": true},
		deliver: func(m string, p json.RawMessage) { routed = append(routed, string(p)) }})
	event := `{"jsonrpc":"2.0","method":"notifications/events/event","params":{"n":12345678901234567890,"_meta":{"io.modelcontextprotocol/subscriptionId":"mcprt-x-1"}}}`
	other := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
	result := `{"jsonrpc":"2.0","id":"mcprt-x-1","result":{}}`
	body := "id: 1\ndata: " + other + "\n\n" + "event: message\r\ndata: " + event + "\r\n\r\n" + "data: " + result + "\n\n"
	owner := &limitedTransport{claim: r.claim}
	slot := &statusSlot{}
	tap := &sseTap{rc: &chunkReader{s: body, n: 7}, limit: 1 << 20, owner: owner, slot: slot}
	got, err := io.ReadAll(tap)
	if err != nil {
		t.Fatal(err)
	}
	want := "id: 1\ndata: " + other + "\n\n" + "data: " + result + "\n\n"
	if string(got) != want {
		t.Fatalf("passed through:\n%q\nwant\n%q", got, want)
	}
	if len(routed) != 1 || !strings.Contains(routed[0], "12345678901234567890") {
		t.Fatalf("routed %q: the big number must arrive exactly as sent", routed)
	}
	if !slot.eof.Load() {
		t.Fatal("a clean end of the body was not recorded")
	}

	big := "data: " + strings.Repeat("x", 2000) + "\n\n"
	tap = &sseTap{rc: &chunkReader{s: big, n: 100}, limit: 1000, owner: &limitedTransport{}}
	if _, err := io.ReadAll(tap); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("oversized event: %v", err)
	}
}
