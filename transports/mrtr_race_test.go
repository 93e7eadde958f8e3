package transports

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// gatedWriter is a server's stdin whose Write returns only after gate is
// closed: the frame is through (the "server" has read it) but the writer
// has not yet returned to mark the request written.
type gatedWriter struct {
	w    *io.PipeWriter
	gate <-chan struct{}
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	<-g.gate
	return n, err
}

func (g *gatedWriter) Close() error { return g.w.Close() }

// A 2026-07-28 line request whose input_required answer is read, and
// whose input round has asked the host, before its writer marks it
// written: cancelling the call must still end the round's wait for the
// host. (The writer used to mark it written after the round began, so the
// cancel looked for a response that had already come and the host's
// question was never withdrawn: TestMultiRoundTripWithTSPeer/stdio timed
// out under load.) The order is forced, not raced: the server's stdin
// returns from Write only once the host has been asked, and the cancel
// waits for the writer to be done.
func TestCancelWhenTheRoundBeganBeforeTheWriteReturned(t *testing.T) {
	d := newDialer(t)
	asked, withdrawn := make(chan struct{}), make(chan struct{})
	d.ServerRequests = func(ctx context.Context, r messages.ServerRequest) (json.RawMessage, *messages.RPCError) {
		close(asked)
		<-ctx.Done()
		close(withdrawn)
		return nil, &messages.RPCError{Code: messages.RPCInternal, Message: "withdrawn"}
	}
	rec := newRecorder()
	c := newConn(d, dialRequest(messages.Endpoint{Command: "unused"}), rec.sink, context.Background())
	c.sess.modern, c.sess.version = true, messages.Protocol20260728
	c.kind = messages.TransportStdio
	inR, inW := io.Pipe()   // what the runtime writes to the server
	outR, outW := io.Pipe() // what the server writes to the runtime
	c.lc = newLineConn(outR, &gatedWriter{w: inW, gate: asked}, c.onNotification, c.onReadEnd)
	c.tr = c.lc
	if err := c.lc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.markOpen()
	defer func() {
		c.Close()
		outW.Close()
		inR.Close()
	}()
	go func() { // the server: answers the request with input_required at once
		sc := bufio.NewScanner(inR)
		if !sc.Scan() {
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(sc.Bytes(), &req)
		resp := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}}` + "\n"
		_, _ = outW.Write([]byte(resp))
		_, _ = io.Copy(io.Discard, inR)
	}()

	ctx := testCtx(t)
	// A stream's spec only so that the writer reports (StreamSent) when it
	// has marked the request written: the cancel then comes after that,
	// the order that lost the question.
	sent := make(chan struct{})
	spec := &messages.StreamSpec{Sink: func(m any) {
		if _, ok := m.(messages.StreamSent); ok {
			close(sent)
		}
	}}
	c.Send(messages.Op{ID: 1, Method: "tools/call", Params: json.RawMessage(`{"name":"t","arguments":{}}`), Stream: spec})
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the host was never asked")
	}
	select {
	case <-sent:
	case <-ctx.Done():
		t.Fatal("the writer never returned")
	}
	c.Cancel(1)
	select {
	case <-withdrawn:
	case <-ctx.Done():
		t.Fatal("the cancelled call's question was never withdrawn from the host")
	}
	res, _ := rec.await(t, ctx, "the call's outcome", isOpResult(1))
	if r := res.(messages.OpResult); r.Err == nil || r.Err.Kind != messages.KindAborted {
		t.Errorf("the cancelled call ended with %+v, want aborted", r)
	}
}
