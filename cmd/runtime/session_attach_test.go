package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
)

// The attached sidecar's typed subscribe and unsubscribe (through the
// shared runtime, remote.Session.Subscribe): the events come as {"event"}
// lines in order with cursors, never as a deliver for the model; an
// unknown event is refused as embedded; unsubscribe ends the server's
// stream, and a second one is an error.
func TestSessionAttachedSubscribe(t *testing.T) {
	addr := startServeConfig(t, map[string]any{"ev": map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --events")}})
	s := startSidecar(t, "--attach", addr)
	s.out, s.inSchema = sessionSchema(t, "output"), sessionSchema(t, "input")
	s.await("the hello", func(string, map[string]any) bool { return true })

	s.send(`{"id":1,"method":"subscribe","params":{"server":"ev","event":"` + testserver.EventPollOnly + `"}}`)
	if e := s.await("a subscribe of an event without push", hasID("1")); e["error"] == nil {
		t.Errorf("a subscribe of an event without push answered %v", e)
	}
	s.send(`{"id":2,"method":"subscribe","params":{"server":"ev","event":"` + testserver.EventTest + `","arguments":{"tag":"x"}}}`)
	e := s.await("subscribe", hasID("2"))
	res, _ := e["result"].(map[string]any)
	id, _ := res["subscription"].(string)
	if id == "" {
		t.Fatalf("subscribe through --attach answered %v", e)
	}
	// The emits one after the other (the sidecar runs calls
	// concurrently); the event lines are collected on the way.
	var events []map[string]any
	collect := func(done func(string, map[string]any) bool) func(string, map[string]any) bool {
		return func(line string, v map[string]any) bool {
			if ev, ok := v["event"].(map[string]any); ok {
				events = append(events, ev)
			}
			if v["deliver"] != nil {
				t.Errorf("a host's subscription woke the model: %v", v)
			}
			return done(line, v)
		}
	}
	for n := 1; n <= 3; n++ {
		s.send(fmt.Sprintf(`{"id":%d,"tool":"mcp","args":{"server":"ev","tool":"%s","args":{"name":"%s","data":{"tag":"x","n":%d}}}}`,
			10+n, testserver.ToolEventsEmit, testserver.EventTest, n))
		s.await("the emit", collect(hasID(fmt.Sprint(10+n))))
	}
	if len(events) < 3 {
		s.await("the events", collect(func(string, map[string]any) bool { return len(events) >= 3 }))
	}
	for i, ev := range events {
		if ev["subscription"] != id || ev["server"] != "ev" || ev["cursor"] == "" || !strings.Contains(fmt.Sprint(ev["data"]), fmt.Sprintf("n:%d", i+1)) {
			t.Fatalf("event line %d: %v", i+1, ev)
		}
	}
	s.send(`{"id":20,"method":"unsubscribe","params":{"subscription":"` + id + `"}}`)
	if e := s.await("unsubscribe", hasID("20")); e["result"] == nil {
		t.Errorf("unsubscribe answered %v", e)
	}
	s.send(`{"id":21,"method":"unsubscribe","params":{"subscription":"` + id + `"}}`)
	if e := s.await("unsubscribe again", hasID("21")); e["error"] == nil {
		t.Errorf("a second unsubscribe answered %v", e)
	}
	// Stop returned once the member had ended it: the server's stream is
	// closed or closing; it ends on its own time.
	for n := 30; ; n++ {
		s.send(fmt.Sprintf(`{"id":%d,"tool":"mcp","args":{"server":"ev","tool":"%s","args":{}}}`, n, testserver.ToolEventsStreams))
		if e := s.await("the stream count", hasID(fmt.Sprint(n))); strings.Contains(fmt.Sprint(e["result"]), `{"streams":[]}`) {
			break
		}
	}
}
