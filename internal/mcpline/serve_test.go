package mcpline

import (
	"bufio"
	"context"
	"io"
	"testing"
)

// lineEnd is a test peer of ServeWith over pipes.
type lineEnd struct {
	in    *io.PipeWriter
	lines chan []byte
	done  chan error
}

func startLine(t *testing.T, p *probe) *lineEnd {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	e := &lineEnd{in: inW, lines: make(chan []byte, 64), done: make(chan error, 1)}
	go func() {
		err := ServeWith(context.Background(), newMCP(), inR, outW, Options{Methods: p.methods()})
		_ = outW.Close()
		e.done <- err
	}()
	go func() {
		defer close(e.lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			e.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		if err := <-e.done; err != nil {
			t.Errorf("ServeWith: %v", err)
		}
	})
	return e
}

func (e *lineEnd) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(e.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (e *lineEnd) recv(t *testing.T, ctx context.Context) frame {
	t.Helper()
	select {
	case b, ok := <-e.lines:
		if !ok {
			t.Fatal("output closed")
		}
		return decode(t, b)
	case <-ctx.Done():
		t.Fatal("timed out waiting for a line")
		return frame{}
	}
}

func TestLineEnds(t *testing.T) {
	ctx := testCtx(t)
	p := newProbe()
	e := startLine(t, p)
	next := func() frame { return e.recv(t, ctx) }

	e.send(t, `{"jsonrpc":"2.0","id":"r","method":"x/stream","params":{"end":"result"}}`)
	checkStreamFrames(t, `"r"`, next)
	if f := next(); string(f.ID) != `"r"` || string(f.Result) != `{"done":true}` {
		t.Fatalf("end: %+v", f)
	}
	if f := next(); f.Method != "x/item" || f.Params.N != 3 {
		t.Fatalf("late frame: %+v", f)
	}

	e.send(t, `{"jsonrpc":"2.0","id":2,"method":"x/stream","params":{"end":"error"}}`)
	checkStreamFrames(t, `2`, next)
	if f := next(); string(f.ID) != `2` || f.Error == nil || f.Error.Code != -32012 || string(f.Error.Data) != `{"why":"test"}` {
		t.Fatalf("error end: %+v", f)
	}
	next() // late

	e.send(t, `{"jsonrpc":"2.0","id":"c","method":"x/stream","params":{"end":"cancel"}}`)
	checkStreamFrames(t, `"c"`, next)
	if f := next(); f.Method != CancelledMethod || string(f.Params.RequestID) != `"c"` || f.ID != nil {
		t.Fatalf("server cancel: %+v", f)
	}
	next() // late

	// eof writes nothing: the late frame comes next, then the ping reply.
	e.send(t, `{"jsonrpc":"2.0","id":"e","method":"x/stream","params":{"end":"eof"}}`)
	checkStreamFrames(t, `"e"`, next)
	if f := next(); f.Method != "x/item" || f.Params.N != 3 {
		t.Fatalf("after eof: %+v", f)
	}

	// A client cancel ends a never-ending stream before the next line is
	// read, and nothing answers it.
	e.send(t, `{"jsonrpc":"2.0","id":"n","method":"x/stream","params":{}}`)
	checkStreamFrames(t, `"n"`, next)
	e.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"n"}}`)
	e.send(t, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if f := next(); string(f.ID) != "9" || f.Error != nil {
		t.Fatalf("after cancel: %+v", f)
	}
	select {
	case id := <-p.cancelled:
		if id != `"n"` {
			t.Fatalf("cancelled %s", id)
		}
	default:
		t.Fatal("the cancel did not end the handler before the next line")
	}

	e.send(t, `{"jsonrpc":"2.0","id":10,"method":"x/echo","params":{"a":[1]}}`)
	if f := next(); string(f.ID) != "10" || string(f.Result) != `{"a":[1]}` {
		t.Fatalf("echo: %+v", f)
	}
	e.send(t, `{"jsonrpc":"2.0","id":11,"method":"nope/nope"}`)
	if f := next(); string(f.ID) != "11" || f.Error == nil {
		t.Fatalf("unknown method: %+v", f)
	}
}

// TestLineRawAndDisconnect: SendRaw writes its bytes as they are; Disconnect
// ends the session: nothing more from custom requests (not even the end of
// a sibling stream the disconnect cancelled), and ServeWith returns.
func TestLineRawAndDisconnect(t *testing.T) {
	ctx := testCtx(t)
	p := newProbe()
	e := startLine(t, p)
	next := func() frame { return e.recv(t, ctx) }
	raw := func() string {
		t.Helper()
		select {
		case b := <-e.lines:
			return string(b)
		case <-ctx.Done():
			t.Fatal("timed out waiting for a line")
			return ""
		}
	}

	e.send(t, `{"jsonrpc":"2.0","id":"w","method":"x/stream","params":{"end":"raw"}}`)
	checkStreamFrames(t, `"w"`, next)
	if got := raw(); got != "not json" {
		t.Fatalf("raw line %q", got)
	}
	if got := raw(); got != `{"jsonrpc":"2.0","id":"w","error":{"code":"E1","message":"odd"}}` {
		t.Fatalf("raw error %q", got)
	}
	if f := next(); f.Method != "x/item" || f.Params.N != 3 {
		t.Fatalf("after raw: %+v", f)
	}

	e.send(t, `{"jsonrpc":"2.0","id":"n","method":"x/stream","params":{}}`)
	checkStreamFrames(t, `"n"`, next)
	e.send(t, `{"jsonrpc":"2.0","id":"d","method":"x/stream","params":{"end":"disconnect"}}`)
	checkStreamFrames(t, `"d"`, next)
	select {
	case b, ok := <-e.lines:
		if ok {
			t.Fatalf("after Disconnect: %s", b)
		}
	case <-ctx.Done():
		t.Fatal("the output did not end after Disconnect")
	}
	if id := <-p.cancelled; id != `"n"` {
		t.Fatalf("cancelled %s", id)
	}
	select {
	case err := <-e.done:
		e.done <- err // for the cleanup
	case <-ctx.Done():
		t.Fatal("ServeWith did not return after Disconnect")
	}
}
