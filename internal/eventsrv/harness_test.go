package eventsrv

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/mcpline"
	"github.com/mcprt/mcprt/internal/mcpserve"
)

// harness runs a Server behind mcpline's line front over pipes, inside a
// synctest bubble with a manual clock, so that a test sees exactly the
// frames its steps caused.
type harness struct {
	t      *testing.T
	srv    *Server
	clk    *clock.Manual
	in     io.Writer
	frames chan string
}

// withServer runs f with a harness for a server of opts and types.
func withServer(t *testing.T, opts Options, types []Type, f func(h *harness)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewManual(time.Time{})
		opts.Clock = clk
		if opts.Rand == nil {
			opts.Rand = clock.NewSeededRand(1)
		}
		srv, err := New(opts, types...)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- mcpline.ServeWith(context.Background(), mcpserve.New(mcpserve.Options{Name: "t", Version: "0"}), inR, outW, mcpline.Options{Methods: srv.Methods()})
			_ = outW.Close()
		}()
		h := &harness{t: t, srv: srv, clk: clk, in: inW, frames: make(chan string, 4096)}
		go func() {
			defer close(h.frames)
			sc := bufio.NewScanner(outR)
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				h.frames <- sc.Text()
			}
		}()
		defer func() { // also after a failed check, so the bubble can end
			_ = inW.Close()
			if err := <-done; err != nil {
				t.Errorf("ServeWith: %v", err)
			}
			for range h.frames {
			}
		}()
		f(h)
	})
}

// send writes one line to the server and waits until everything it
// caused has happened (the bubble is idle).
func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatal(err)
	}
	synctest.Wait()
}

// request sends a request with a raw JSON id and params.
func (h *harness) request(id, method, params string) {
	h.t.Helper()
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
}

// open opens an events/stream with id and params.
func (h *harness) open(id, params string) { h.request(id, MethodStream, params) }

// cancel cancels request id.
func (h *harness) cancel(id string) {
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
}

// raw returns every line written since the last call, once the bubble is
// idle.
func (h *harness) raw() []string {
	synctest.Wait()
	var out []string
	for {
		select {
		case l, ok := <-h.frames:
			if !ok {
				return out
			}
			out = append(out, l)
		default:
			return out
		}
	}
}

// trace returns what was written since the last call, each frame
// described by [harness.describe] for subscription sub.
func (h *harness) trace(sub string) []string {
	var out []string
	for _, l := range h.raw() {
		out = append(out, h.describe(l, sub))
	}
	return out
}

// expect checks the trace against want.
func (h *harness) expect(sub string, want ...string) {
	h.t.Helper()
	got := h.trace(sub)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Fatalf("frames:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// at renders a cursor: "@seq", "@seq(name)" for another event type, the
// raw text for one of another epoch or none.
func (h *harness) at(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "cursor=" + string(raw)
	}
	c, err := parseCursor(s)
	if err != nil || c.epoch != h.srv.epoch {
		return "cursor=" + s
	}
	return fmt.Sprintf("@%d", c.seq)
}

// describe renders one line compactly. Notifications of the events
// protocol must carry subscription id sub (else the description says
// "sub=..."); eventIds lose the epoch.
func (h *harness) describe(line, sub string) string {
	var f struct {
		ID     json.RawMessage            `json:"id"`
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
		Result json.RawMessage            `json:"result"`
		Error  map[string]json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(line), &f) != nil {
		return "raw " + line
	}
	p := f.Params
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(p["_meta"], &meta)
	tag := ""
	if got := compact(meta[mcpline.SubscriptionIDKey]); strings.HasPrefix(f.Method, "notifications/events/") && got != sub {
		tag = " sub=" + got
	}
	str := func(k string) string { return compact(p[k]) }
	switch f.Method {
	case NoteActive:
		d := "active " + h.at(p["cursor"])
		if str("truncated") == "true" {
			d += " truncated"
		}
		return d + tag
	case NoteEvent:
		id := strings.ReplaceAll(str("eventId"), h.srv.epoch, "E")
		return fmt.Sprintf("event %s %s %s %s%s", id, str("name"), str("data"), h.at(p["cursor"]), tag)
	case NoteHeartbeat:
		return "heartbeat " + h.at(p["cursor"]) + tag
	case NoteError, NoteTerminated:
		return strings.TrimPrefix(f.Method, "notifications/events/") + " " + str("error") + tag
	case "":
		if f.Error != nil {
			return fmt.Sprintf("rpc-error %s %s %s", compact(f.ID), compact(f.Error["code"]), compact(f.Error["message"]))
		}
		return fmt.Sprintf("result %s %s", compact(f.ID), compact(f.Result))
	}
	return f.Method + " " + compact(json.RawMessage(mustJSON(p))) + tag
}

// cursor returns the wire cursor of position seq of event type name.
func (h *harness) cursor(name string, seq uint64) string {
	return cursor{epoch: h.srv.epoch, name: name, seq: seq}.String()
}

// publish publishes data for name.
func (h *harness) publish(name string, data any) Entry {
	h.t.Helper()
	e, err := h.srv.Publish(name, data)
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

// inject applies a fault to every open stream.
func (h *harness) inject(f Fault) int {
	h.t.Helper()
	n, err := h.srv.Inject(context.Background(), f, Target{})
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// basicTypes are a type "a" whose arguments {"even": true} keep only even
// data.n, and a type "b".
func basicTypes() []Type {
	return []Type{
		{Name: "a", Description: "type a", Match: func(args json.RawMessage) (func(json.RawMessage) bool, error) {
			var a struct {
				Even bool `json:"even"`
				Bad  bool `json:"bad"`
			}
			_ = json.Unmarshal(args, &a)
			if a.Bad {
				return nil, fmt.Errorf("bad is bad")
			}
			return func(data json.RawMessage) bool {
				var d struct{ N int }
				_ = json.Unmarshal(data, &d)
				return !a.Even || d.N%2 == 0
			}, nil
		}},
		{Name: "b"},
	}
}
