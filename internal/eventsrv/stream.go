package eventsrv

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/mcpline"
)

// pumpBatch is how many occurrences a stream copies out of its log at once.
const pumpBatch = 64

// stream is one events/stream request being served. Its handler's
// goroutine runs the loop and owns the fields marked "loop"; everything
// else may be touched from other goroutines.
type stream struct {
	srv   *Server
	t     *topic
	call  *mcpline.Call
	sub   string // the request id, compact JSON
	n     uint64 // opening order
	match func(json.RawMessage) bool
	// prefix starts every event frame: the envelope with the _meta.
	prefix []byte
	wake   chan struct{} // capacity 1: something to do
	gone   chan struct{} // closed when the handler has finished

	pos     atomic.Uint64 // the last sequence number sent or skipped
	active  atomic.Bool   // acknowledged
	stalled atomic.Bool

	mu    sync.Mutex
	queue []faultReq // guarded by mu

	muted      bool        // loop: terminated, sends nothing more
	stallTimer clock.Timer // loop: ends a timed stall
}

type faultReq struct {
	f    Fault
	done chan struct{}
}

// poke wakes the loop without blocking.
func (st *stream) poke() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// enqueue hands f to the loop; the channel closes once it is applied.
func (st *stream) enqueue(f Fault) chan struct{} {
	done := make(chan struct{})
	st.mu.Lock()
	st.queue = append(st.queue, faultReq{f, done})
	st.mu.Unlock()
	st.poke()
	return done
}

func (st *stream) take() []faultReq {
	st.mu.Lock()
	defer st.mu.Unlock()
	q := st.queue
	st.queue = nil
	return q
}

func (st *stream) info() StreamInfo {
	return StreamInfo{Subscription: st.sub, Name: st.t.typ.Name, Cursor: st.srv.cursorAt(st.t, st.pos.Load()),
		Active: st.active.Load(), Stalled: st.stalled.Load()}
}

// serveStream serves events/stream: it checks the request, places the
// stream in its log and runs it until the client leaves or a fault ends it.
func (s *Server) serveStream(ctx context.Context, call *mcpline.Call) (any, error) {
	p, perr := decodeStreamParams(call.Params())
	if perr != nil {
		return nil, perr
	}
	t := s.byName[p.Name]
	if t == nil {
		return nil, &mcpline.Error{Code: CodeNotFound, Message: "unknown event type " + p.Name, Data: map[string]any{"kind": "event"}}
	}
	if !slices.Contains(t.typ.Descriptor().Delivery, DeliveryPush) {
		return nil, &mcpline.Error{Code: CodeUnsupported, Message: p.Name + " is not delivered by push",
			Data: map[string]any{"feature": "deliveryMode", "value": DeliveryPush}}
	}
	match := func(json.RawMessage) bool { return true }
	if t.typ.Match != nil {
		m, err := t.typ.Match(p.Arguments)
		if err != nil {
			return nil, invalid("events/stream: arguments of %s: %v", p.Name, err)
		}
		match = m
	}
	var c *cursor
	known := false
	if p.Cursor != nil {
		cc, err := parseCursor(*p.Cursor)
		if err != nil {
			return nil, invalid("events/stream: the cursor is not one of this server's")
		}
		if cc.name != p.Name {
			return nil, invalid("events/stream: the cursor belongs to event type %q", cc.name)
		}
		c, known = &cc, cc.epoch == s.epoch
	}
	var maxAge *time.Duration
	if p.MaxAgeMs != nil {
		d := time.Duration(min(*p.MaxAgeMs, int64(1<<62)/int64(time.Millisecond))) * time.Millisecond
		maxAge = &d
	}

	st, err := s.register(t, call, match)
	if err != nil {
		return nil, err
	}
	defer s.unregister(st)
	before, after := s.takeArmed(p.Name)
	pl := t.attach(st, func(l *eventLog, now time.Time) placement { return l.place(c, known, maxAge, now, match) }, s.clk)
	defer t.detach(st)
	return st.run(ctx, p, pl, before, after)
}

// register records a new stream, refusing it beyond MaxStreams.
func (s *Server) register(t *topic, call *mcpline.Call, match func(json.RawMessage) bool) (*stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.streams) >= s.opts.MaxStreams {
		return nil, &mcpline.Error{Code: CodeResourceExhausted, Message: "too many event streams",
			Data: map[string]any{"limit": "streams", "max": s.opts.MaxStreams}}
	}
	s.seq++
	st := &stream{srv: s, t: t, call: call, sub: compact(call.ID()), n: s.seq, match: match,
		wake: make(chan struct{}, 1), gone: make(chan struct{})}
	st.prefix = []byte(`{"jsonrpc":"2.0","method":"` + NoteEvent + `","params":{"_meta":{"` + mcpline.SubscriptionIDKey + `":` + st.sub + `},`)
	s.streams[st] = struct{}{}
	return st, nil
}

func (s *Server) unregister(st *stream) {
	s.mu.Lock()
	delete(s.streams, st)
	s.mu.Unlock()
	if st.stallTimer != nil {
		st.stallTimer.Stop()
	}
	close(st.gone)
}

// attach starts the type's source for its first stream, then places st
// and adds it to the topic's streams.
func (t *topic) attach(st *stream, place func(*eventLog, time.Time) placement, clk clock.Clock) placement {
	t.watchMu.Lock()
	if t.watchers == 0 && t.typ.Watch != nil {
		t.stop = t.typ.Watch()
	}
	t.watchers++
	t.watchMu.Unlock()

	t.mu.Lock()
	defer t.mu.Unlock()
	now := clk.Now()
	t.log.prune(now)
	pl := place(&t.log, now)
	st.pos.Store(pl.pos)
	t.subs[st] = struct{}{}
	return pl
}

// detach removes st and stops the source after the last stream.
func (t *topic) detach(st *stream) {
	t.mu.Lock()
	delete(t.subs, st)
	t.mu.Unlock()
	t.watchMu.Lock()
	defer t.watchMu.Unlock()
	t.watchers--
	if t.watchers == 0 && t.stop != nil {
		t.stop()
		t.stop = nil
	}
}

// run is the stream's loop: acknowledge (once not stalled), send what the
// log holds after the stream's position, apply faults, send heartbeats,
// until the client leaves or a fault ends the stream.
func (st *stream) run(ctx context.Context, p StreamParams, pl placement, before, after []Fault) (any, error) {
	clk := st.srv.clk
	beat := make(chan struct{}, 1)
	var timer clock.Timer
	arm := func() {
		if d := st.srv.opts.Heartbeat; d > 0 {
			timer = clk.AfterFunc(d, func() {
				select {
				case beat <- struct{}{}:
				default:
				}
			})
		}
	}
	arm()
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()

	for _, f := range before {
		if f.Kind == FaultDelay {
			if !clock.Wait(ctx, clk, time.Duration(f.Ms)*time.Millisecond) {
				return nil, ctx.Err()
			}
			continue
		}
		if end, res, err := st.apply(f); end {
			return res, err
		}
	}
	for {
		faults := st.take()
		if !st.active.Load() && !st.stalled.Load() && !st.muted {
			if end, res, err := st.acknowledge(p, pl, after); end {
				return res, err
			}
		}
		if st.active.Load() && !st.stalled.Load() && !st.muted {
			if err := st.pump(); err != nil {
				return nil, err
			}
		}
		for _, r := range faults {
			if r.f.Kind == FaultDisconnect {
				// Acknowledge first: the disconnect ends the context of
				// the request that asked for it, on line transports.
				close(r.done)
				r.done = nil
			}
			end, res, err := st.apply(r.f)
			if end {
				// A fault that ends the stream (and those queued behind it,
				// which are not applied) is acknowledged by st.gone, once
				// the stream is unregistered: whoever injected it then no
				// longer finds the stream open (Inject waits for either).
				return res, err
			}
			if r.done != nil {
				close(r.done)
			}
		}
		if len(faults) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-st.wake:
		case <-beat:
			if st.active.Load() && !st.stalled.Load() && !st.muted {
				if err := st.heartbeat(); err != nil {
					return nil, err
				}
			}
			arm()
		}
	}
}

// acknowledge sends notifications/events/active with the client's cursor
// (or, from now, the current one) and, when the start is truncated, a
// second one with the fresh cursor; then it applies the faults armed for
// after the acknowledgement.
func (st *stream) acknowledge(p StreamParams, pl placement, after []Fault) (end bool, res any, err error) {
	first := p.Cursor
	if first == nil {
		c := st.srv.cursorAt(st.t, pl.pos)
		first = &c
	}
	// Active before the frame is written: a client that has read it and
	// asks for the open streams (events_streams) finds the stream active.
	st.active.Store(true)
	if err := st.call.Send(NoteActive, activeFrame{Cursor: first}); err != nil {
		return true, nil, err
	}
	if pl.truncated {
		if err := st.announceGap(pl.pos); err != nil {
			return true, nil, err
		}
	}
	for _, f := range after {
		if end, res, err := st.apply(f); end {
			return true, res, err
		}
	}
	return false, nil, nil
}

// announceGap sends active {cursor at pos, truncated: true}.
func (st *stream) announceGap(pos uint64) error {
	c := st.srv.cursorAt(st.t, pos)
	return st.call.Send(NoteActive, activeFrame{Cursor: &c, Truncated: true})
}

// pump sends every occurrence after the stream's position that matches its
// arguments, advancing the position over those that do not. Occurrences
// retention dropped before the stream sent them are a gap, announced first.
func (st *stream) pump() error {
	for {
		pos := st.pos.Load()
		st.t.mu.Lock()
		gap := pos < st.t.log.floor
		if gap {
			pos = st.t.log.floor
		}
		batch := st.t.log.after(pos, pumpBatch)
		st.t.mu.Unlock()
		if gap {
			st.pos.Store(pos)
			if err := st.announceGap(pos); err != nil {
				return err
			}
		}
		if len(batch) == 0 {
			return nil
		}
		for _, e := range batch {
			if st.match(e.Data) {
				if err := st.send(e); err != nil {
					return err
				}
			}
			st.pos.Store(e.Seq)
		}
	}
}

// send sends one occurrence as notifications/events/event: the stream's
// prefix (the envelope and its _meta) and the occurrence's encoded tail.
func (st *stream) send(e Entry) error {
	if e.tail == nil {
		return st.call.Send(NoteEvent, eventFrame{EventID: e.ID, Name: st.t.typ.Name,
			Timestamp: e.Time.UTC().Format(time.RFC3339Nano), Data: e.Data, Cursor: st.srv.cursorAt(st.t, e.Seq)})
	}
	msg := make([]byte, 0, len(st.prefix)+len(e.tail)+1)
	msg = append(append(msg, st.prefix...), e.tail...)
	return st.call.SendRaw(append(msg, '}'))
}

// heartbeat sends notifications/events/heartbeat with the stream's cursor.
func (st *stream) heartbeat() error {
	return st.call.Send(NoteHeartbeat, cursorFrame{Cursor: st.srv.cursorAt(st.t, st.pos.Load())})
}

// compact returns raw JSON in compact form.
func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}
