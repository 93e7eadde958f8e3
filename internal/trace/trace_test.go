package trace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// fakeDialer connects at once; its connection answers nothing by itself.
type fakeDialer struct{ sink messages.Sink }

type fakeConn struct{ sent []messages.Op }

func (d *fakeDialer) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	d.sink = sink
	sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Conn: &fakeConn{}, Info: messages.ServerInfo{Transport: messages.TransportStdio, ProtocolVersion: "2025-11-25"}})
	return nil
}
func (c *fakeConn) Send(op messages.Op)            { c.sent = append(c.sent, op) }
func (c *fakeConn) Cancel(messages.OpID)           {}
func (c *fakeConn) Notify(string, json.RawMessage) {}
func (c *fakeConn) Close()                         {}

// The lines of a traced request: times from the injected clock, sizes and
// the end reason, never the payload; a server's odd notification method
// is replaced.
func TestTraceLines(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	w := Open(dir, nil)
	fd := &fakeDialer{}
	var conn messages.Conn
	d := Wrap(fd, clk, w, func(s string) bool { return s == "srv" })
	d.Dial(messages.DialRequest{Server: "srv", Gen: 1, Endpoint: messages.Endpoint{Command: "x", Env: map[string]string{"K": "SECRET"}}}, func(msg any) {
		if r, ok := msg.(messages.DialResult); ok {
			conn = r.Conn
		}
	})
	conn.Send(messages.Op{ID: 7, Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{"m":"SECRET"}}`)})
	clk.Advance(1500 * time.Millisecond)
	fd.sink(messages.OpResult{Server: "srv", Gen: 1, ID: 7, Result: json.RawMessage(`{"content":[{"type":"text","text":"SECRET"}]}`)})
	fd.sink(messages.ConnNotification{Server: "srv", Gen: 1, Method: "notifications/SECRET value", Params: json.RawMessage(`{}`)})
	w.Close()
	b, err := os.ReadFile(filepath.Join(dir, "srv.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"t":"2026-01-02T03:04:05Z","server":"srv","gen":1,"dir":"-","kind":"dial","transport":"stdio"}
{"t":"2026-01-02T03:04:05Z","server":"srv","gen":1,"dir":"-","kind":"connected","ms":0,"end":"ok","transport":"stdio","protocol":"2025-11-25"}
{"t":"2026-01-02T03:04:05Z","server":"srv","gen":1,"dir":"out","kind":"request","method":"tools/call","id":7,"bytes":42}
{"t":"2026-01-02T03:04:06.5Z","server":"srv","gen":1,"dir":"in","kind":"response","method":"tools/call","id":7,"bytes":45,"ms":1500,"end":"ok"}
{"t":"2026-01-02T03:04:06.5Z","server":"srv","gen":1,"dir":"in","kind":"notification","method":"?","bytes":2}
`
	if string(b) != want {
		t.Fatalf("the trace:\n%s\nwant:\n%s", b, want)
	}
	if strings.Contains(string(b), "SECRET") {
		t.Fatal("a payload leaked")
	}
}

// A full queue drops lines and says so in the next line written.
func TestTraceDropsCounted(t *testing.T) {
	w := &Writer{lines: make(chan Record, 1), done: make(chan struct{})}
	w.Write(Record{Kind: "a"})
	w.Write(Record{Kind: "b"}) // full: dropped
	w.Write(Record{Kind: "c"}) // full: dropped
	<-w.lines
	w.Write(Record{Kind: "d"})
	if r := <-w.lines; r.Kind != "d" || r.Dropped != 2 {
		t.Fatalf("after two drops: %+v", r)
	}
	w.Write(Record{Kind: "e"})
	if r := <-w.lines; r.Dropped != 0 {
		t.Fatalf("the drops were told twice: %+v", r)
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{"github": "github.jsonl", "a/b c": "a_b_c.jsonl", "..": "_...jsonl", "": "_.jsonl"} {
		if got := FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// A file that would pass the rotation size becomes SERVER.jsonl.1 and a
// new one starts; both are mode 0600.
func TestTraceRotates(t *testing.T) {
	dir := t.TempDir()
	w := open(dir, nil, 300)
	for i := 0; i < 5; i++ {
		w.Write(Record{Server: "s", Dir: "out", Kind: "request", Method: "tools/call", ID: uint64(i + 1)})
	}
	w.Close()
	cur, err := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(dir, "s.jsonl.1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cur) > 300 || len(old) > 300 || strings.Count(string(cur)+string(old), "\n") < 4 {
		t.Fatalf("rotation: current %d bytes, previous %d bytes", len(cur), len(old))
	}
	for _, f := range []string{"s.jsonl", "s.jsonl.1"} {
		if st, _ := os.Stat(filepath.Join(dir, f)); st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v", f, st.Mode().Perm())
		}
	}
}
