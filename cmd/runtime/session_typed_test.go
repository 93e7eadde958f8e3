package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sidecar's typed catalog, resources and subscriptions against the
// demo server in its own process: every line follows
// docs/sidecar.schema.json; a subscription's events come as {"event"}
// lines (never as a deliver for the model), unsubscribe ends it.
func TestSessionTypedCatalogAndSubscribe(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello typed"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startSidecar(t, "--stdio", binary(t)+" demo-server --root "+root)
	s.out, s.inSchema = sessionSchema(t, "output"), sessionSchema(t, "input")
	s.await("the hello", func(string, map[string]any) bool { return true })

	s.send(`{"id":1,"method":"serverResources","params":{"server":"adhoc"}}`)
	if e := s.await("serverResources before a listing", hasID("1")); e["error"] == nil {
		t.Errorf("a catalog never listed answered %v", e)
	}
	s.send(`{"id":2,"method":"connect","params":{"server":"adhoc"}}`)
	s.await("connect", hasID("2"))
	s.send(`{"id":3,"method":"serverResources","params":{"server":"adhoc"}}`)
	if e := s.await("serverResources", hasID("3")); !strings.Contains(fmt.Sprint(e["result"]), "demo://about") || !strings.Contains(fmt.Sprint(e["result"]), "mcprt.dev/demo") {
		t.Errorf("serverResources answered %v", e)
	}
	s.send(`{"id":4,"method":"serverTemplates","params":{"server":"adhoc"}}`)
	if e := s.await("serverTemplates", hasID("4")); !strings.Contains(fmt.Sprint(e["result"]), "demo://files/{name}") {
		t.Errorf("serverTemplates answered %v", e)
	}
	s.send(`{"id":5,"method":"serverPrompts","params":{"server":"adhoc"}}`)
	if e := s.await("serverPrompts", hasID("5")); !strings.Contains(fmt.Sprint(e["result"]), "greet") {
		t.Errorf("serverPrompts answered %v", e)
	}
	s.send(`{"id":6,"method":"readResource","params":{"server":"adhoc","template":"files","arguments":{"name":"hello.txt"}}}`)
	if e := s.await("readResource", hasID("6")); !strings.Contains(fmt.Sprint(e["result"]), "hello typed") {
		t.Errorf("readResource answered %v", e)
	}
	s.send(`{"id":7,"method":"readResource","params":{"server":"adhoc"}}`)
	if e := s.await("readResource without a uri", hasID("7")); e["error"] == nil {
		t.Errorf("readResource without a uri answered %v", e)
	}

	s.send(`{"id":8,"method":"subscribe","params":{"server":"adhoc","event":"fs.changed","arguments":{"glob":"*.md"}}}`)
	e := s.await("subscribe", hasID("8"))
	res, _ := e["result"].(map[string]any)
	id, _ := res["subscription"].(string)
	if id == "" {
		t.Fatalf("subscribe answered %v", e)
	}
	if err := os.WriteFile(filepath.Join(root, "note.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	ev := s.await("the event", func(_ string, v map[string]any) bool {
		if v["deliver"] != nil {
			t.Errorf("a host's subscription woke the model: %v", v)
		}
		return v["event"] != nil
	})["event"].(map[string]any)
	if ev["subscription"] != id || ev["name"] != "fs.changed" || !strings.Contains(fmt.Sprint(ev["data"]), "note.md") {
		t.Errorf("the event line: %v", ev)
	}
	s.send(`{"id":9,"method":"unsubscribe","params":{"subscription":"` + id + `"}}`)
	if e := s.await("unsubscribe", hasID("9")); e["result"] == nil {
		t.Errorf("unsubscribe answered %v", e)
	}
	s.send(`{"id":10,"method":"unsubscribe","params":{"subscription":"` + id + `"}}`)
	if e := s.await("unsubscribe again", hasID("10")); e["error"] == nil {
		t.Errorf("a second unsubscribe answered %v", e)
	}
	// The server's stream ends (the cancel reaches it on its own time).
	for n := 11; ; n++ {
		s.send(fmt.Sprintf(`{"id":%d,"tool":"mcp","args":{"tool":"demo_fault","args":{"fault":"resume"}}}`, n))
		if e := s.await("the stream count", hasID(fmt.Sprint(n))); strings.Contains(fmt.Sprint(e["result"]), `{"streams":0}`) {
			break
		}
	}
}
