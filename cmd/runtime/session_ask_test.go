package main

import (
	"strings"
	"testing"
)

// With --ask-host a server's question goes to the host as an ask line and
// the host's answer line (accept, decline) reaches the server; an answer
// nobody waits for is refused. Every line in
// and out is checked against docs/sidecar.schema.json.
func TestSessionAsksTheHost(t *testing.T) {
	stdio, _ := stdioTestServer(t, "--stdio --client-requests")
	s := startSidecarArgs(t, "--stdio", stdio, "session", "--ask-host")
	s.out, s.inSchema = sessionSchema(t, "output"), sessionSchema(t, "input")
	hello := s.await("the hello", func(string, map[string]any) bool { return true })
	if asks, _ := hello["hello"].(map[string]any)["asks"].([]any); len(asks) != 3 {
		t.Errorf("the hello does not say what the host will be asked: %v", hello)
	}
	isAsk := func(_ string, v map[string]any) bool { return v["ask"] != nil }

	s.send(`{"id":1,"tool":"mcp","args":{"tool":"ask_name","args":{}}}`)
	ask := s.await("the question", isAsk)["ask"].(map[string]any)
	fields, _ := ask["fields"].([]any)
	if ask["kind"] != "elicitation" || ask["server"] != "adhoc" || len(fields) != 1 || fields[0].(map[string]any)["name"] != "name" {
		t.Fatalf("asked %v", ask)
	}
	s.send(`{"answer":"` + ask["id"].(string) + `","result":{"action":"accept","content":{"name":"Ada"}}}`)
	res := s.await("the call's answer", hasID("1"))
	if text, _ := res["result"].(map[string]any)["text"].(string); !strings.Contains(text, "accept Ada") {
		t.Errorf("the server did not get the host's answer: %v", res)
	}

	// A decline reaches the server as a decline.
	s.send(`{"id":2,"tool":"mcp","args":{"tool":"ask_name","args":{}}}`)
	q2 := s.await("the second question", isAsk)["ask"].(map[string]any)["id"].(string)
	s.send(`{"answer":"` + q2 + `","result":{"action":"decline"}}`)
	if text, _ := s.await("the second call's answer", hasID("2"))["result"].(map[string]any)["text"].(string); !strings.HasPrefix(text, "decline") {
		t.Errorf("the server did not get the decline: %q", text)
	}

	// Answering it again, or a question never asked, is refused; the session goes on.
	for _, q := range []string{q2, "q99"} {
		s.send(`{"answer":"` + q + `","result":{"action":"accept","content":{"name":"late"}}}`)
		e := s.await("the stray answer's error", func(_ string, v map[string]any) bool { return v["error"] != nil })
		if e["error"].(map[string]any)["code"] != "unknown_id" {
			t.Errorf("a stray answer got %v", e)
		}
	}
	s.send(`{"id":3,"tool":"mcp","args":{"tool":"echo","args":{"message":"still here"}}}`)
	if text, _ := s.await("a later call", hasID("3"))["result"].(map[string]any)["text"].(string); !strings.Contains(text, "still here") {
		t.Errorf("a later call answered %q", text)
	}
}
