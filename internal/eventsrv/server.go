package eventsrv

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/mcpline"
)

// Defaults of [Options].
const (
	DefaultHeartbeat  = 30 * time.Second
	DefaultMaxEvents  = 1000
	DefaultMaxAge     = 24 * time.Hour
	DefaultMaxStreams = 256
)

// Type is one event type a Server offers.
type Type struct {
	Name        string
	Description string
	// Delivery lists the delivery modes events/list advertises; nil means
	// ["push"]. A stream of a type without "push" is refused (-32014).
	Delivery []string
	// InputSchema describes the arguments; nil means {"type":"object"}.
	InputSchema   map[string]any
	PayloadSchema map[string]any
	// Match compiles a stream's arguments (a JSON object) into a predicate
	// on an occurrence's data, or refuses them with an error (sent as
	// -32602 with its text). Nil takes any arguments and every occurrence.
	Match func(args json.RawMessage) (func(data json.RawMessage) bool, error)
	// Watch, when set, starts the type's source when its first stream
	// opens, before that stream takes its position (so what Watch
	// publishes at once is in the past for it), and returns the function
	// that stops it once the last stream has gone.
	Watch func() (stop func())
}

// Options configure a Server. The zero value is ready to use.
type Options struct {
	// Clock is the source of time (timestamps, heartbeats, retention,
	// delays); nil means the wall clock.
	Clock clock.Clock
	// Rand makes the epoch; nil means a crypto-seeded source.
	Rand clock.Rand
	// Heartbeat is the interval of notifications/events/heartbeat on each
	// stream; zero means DefaultHeartbeat, a negative value none at all.
	Heartbeat time.Duration
	// MaxEvents and MaxAge bound each event type's retention (replay
	// buffer); zero means DefaultMaxEvents and DefaultMaxAge.
	MaxEvents int
	MaxAge    time.Duration
	// MaxStreams bounds the streams open at once (-32013 beyond it); zero
	// means DefaultMaxStreams.
	MaxStreams int
	// StateDir, when set, keeps the epoch and the logs on disk so that
	// cursors survive a restart; empty keeps them in memory.
	StateDir string
	// PageSize splits the events/list result into pages of this many
	// types; zero means one page.
	PageSize int
}

// Server serves the events protocol for a set of event types: the
// events/list and events/stream methods (see [Server.Methods]), retention,
// cursors, heartbeats and the faults tests and demos inject.
type Server struct {
	opts   Options
	clk    clock.Clock
	epoch  string
	store  *store // nil without a state directory
	topics []*topic
	byName map[string]*topic

	mu      sync.Mutex
	streams map[*stream]struct{} // guarded by mu
	armed   []armedFault         // guarded by mu
	seq     uint64               // numbers streams; guarded by mu
}

// topic is one event type with its log and its streams.
type topic struct {
	typ Type

	watchMu  sync.Mutex
	watchers int    // streams attached; guarded by watchMu
	stop     func() // stops the source; guarded by watchMu

	// quoted is the name as a JSON string; cursorHead the start of its
	// cursors' JSON, `["epoch","name",`.
	quoted, cursorHead []byte

	mu   sync.Mutex
	log  eventLog             // guarded by mu
	subs map[*stream]struct{} // guarded by mu
}

// New returns a Server for types (names must be unique and non-empty),
// loading their logs from opts.StateDir when it is set.
func New(opts Options, types ...Type) (*Server, error) {
	if opts.Heartbeat == 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	s := &Server{opts: opts, clk: clock.Or(opts.Clock), byName: map[string]*topic{}, streams: map[*stream]struct{}{}}
	if opts.StateDir != "" {
		st, epoch, err := openStore(opts.StateDir, clock.OrRand(opts.Rand))
		if err != nil {
			return nil, err
		}
		s.store, s.epoch = st, epoch
	} else {
		s.epoch = clock.HexID(clock.OrRand(opts.Rand), 8)
	}
	now := s.clk.Now()
	for _, typ := range types {
		if typ.Name == "" || s.byName[typ.Name] != nil {
			s.Close()
			return nil, fmt.Errorf("eventsrv: event type name %q is empty or repeated", typ.Name)
		}
		t := &topic{typ: typ, log: eventLog{maxEvents: opts.MaxEvents, maxAge: opts.MaxAge}, subs: map[*stream]struct{}{}}
		t.quoted, _ = json.Marshal(typ.Name)
		head, _ := json.Marshal([]string{s.epoch, typ.Name})
		t.cursorHead = append(head[:len(head)-1], ',')
		if s.store != nil {
			if err := s.store.load(typ.Name, &t.log, now); err != nil {
				s.Close()
				return nil, err
			}
			for i := range t.log.entries {
				t.log.entries[i].tail = s.encodeTail(t, t.log.entries[i])
			}
		}
		s.topics = append(s.topics, t)
		s.byName[typ.Name] = t
	}
	return s, nil
}

// Methods returns the custom methods to serve with mcpline: events/list and
// events/stream.
func (s *Server) Methods() mcpline.Methods {
	return mcpline.Methods{MethodList: s.list, MethodStream: s.serveStream}
}

// Add adds the events methods to methods (which may be nil) and returns it.
func (s *Server) Add(methods mcpline.Methods) mcpline.Methods {
	if methods == nil {
		methods = mcpline.Methods{}
	}
	for name, h := range s.Methods() {
		methods[name] = h
	}
	return methods
}

// Epoch returns the epoch cursors of this server carry.
func (s *Server) Epoch() string { return s.epoch }

// Close closes the state files. Streams end with their connections.
func (s *Server) Close() {
	if s.store == nil {
		return
	}
	for _, t := range s.topics {
		t.mu.Lock()
	}
	s.store.close()
	for _, t := range s.topics {
		t.mu.Unlock()
	}
}

// Descriptor returns an event type's events/list entry.
func (t Type) Descriptor() Descriptor {
	d := Descriptor{Name: t.Name, Description: t.Description, Delivery: t.Delivery, InputSchema: t.InputSchema, PayloadSchema: t.PayloadSchema}
	if d.Delivery == nil {
		d.Delivery = []string{DeliveryPush}
	}
	if d.InputSchema == nil {
		d.InputSchema = map[string]any{"type": "object"}
	}
	return d
}

// list serves events/list, in pages of Options.PageSize; the page cursor
// is opaque (base64url of the offset).
func (s *Server) list(_ context.Context, call *mcpline.Call) (any, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if !isNull(call.Params()) && json.Unmarshal(call.Params(), &p) != nil {
		return nil, invalid("events/list params must be an object with an optional string cursor")
	}
	from := 0
	if p.Cursor != nil {
		b, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
		n, aerr := strconv.Atoi(string(b))
		if err != nil || aerr != nil || n <= 0 || n >= len(s.topics) {
			return nil, invalid("events/list: unknown cursor")
		}
		from = n
	}
	to := len(s.topics)
	if s.opts.PageSize > 0 {
		to = min(to, from+s.opts.PageSize)
	}
	res := listResult{Events: []Descriptor{}, ResultType: resultType(call.Params())}
	for _, t := range s.topics[from:to] {
		res.Events = append(res.Events, t.typ.Descriptor())
	}
	if to < len(s.topics) {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(to)))
	}
	return res, nil
}

// ErrUnknownType is what Publish returns for a name the server does not
// offer.
var ErrUnknownType = errors.New("eventsrv: unknown event type")

// Publish records an occurrence of the event type name with data (any
// value that encodes to JSON) and an eventId of its own, and wakes the
// type's streams. It returns the entry.
func (s *Server) Publish(name string, data any) (Entry, error) {
	return s.PublishID(name, "", data)
}

// PublishID is Publish with a given eventId ("" makes one: "evt_" + the
// epoch + "_" + the sequence number).
func (s *Server) PublishID(name, id string, data any) (Entry, error) {
	t := s.byName[name]
	if t == nil {
		return Entry{}, fmt.Errorf("%w %q", ErrUnknownType, name)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return Entry{}, fmt.Errorf("eventsrv: encode %s data: %w", name, err)
	}
	now := s.clk.Now()
	t.mu.Lock()
	e := Entry{Seq: t.log.head + 1, ID: id, Time: now.UTC(), Data: raw}
	if e.ID == "" {
		e.ID = "evt_" + s.epoch + "_" + strconv.FormatUint(e.Seq, 10)
	}
	e.tail = s.encodeTail(t, e)
	t.log.add(e, now)
	if s.store != nil {
		err = s.store.append(name, e, &t.log)
	}
	for st := range t.subs {
		st.poke()
	}
	t.mu.Unlock()
	return e, err
}

// cursorAt is the cursor of position seq in t's log (as cursor.String
// makes it, from the topic's encoded prefix).
func (s *Server) cursorAt(t *topic, seq uint64) string {
	b := strconv.AppendUint(append(make([]byte, 0, len(t.cursorHead)+24), t.cursorHead...), seq, 10)
	return base64.RawURLEncoding.EncodeToString(append(b, ']'))
}

// encodeTail encodes e's notifications/events/event params after _meta
// (see Entry.tail). e.Data is compact JSON without line breaks: it comes
// from json.Marshal, or from a state file line that did.
func (s *Server) encodeTail(t *topic, e Entry) []byte {
	id, _ := json.Marshal(e.ID) // a string always encodes
	c := s.cursorAt(t, e.Seq)
	b := make([]byte, 0, len(id)+len(t.quoted)+len(e.Data)+len(c)+128)
	b = append(append(b, `"eventId":`...), id...)
	b = append(append(b, `,"name":`...), t.quoted...)
	b = append(b, `,"timestamp":"`...)
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(append(b, `","data":`...), e.Data...)
	b = append(append(append(b, `,"cursor":"`...), c...), `"}`...)
	return b
}
