package demoserver

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/internal/eventsrv"
)

// The demo server's event types.
const (
	EventFSChanged = "fs.changed"
	EventClockTick = "clock.tick"
)

// Defaults of the events options.
const (
	DefaultPoll = 250 * time.Millisecond
	// tickEvery is clock.tick's base period; the seconds argument keeps
	// every N-th whole second.
	tickEvery = time.Second
)

// FaultToolName is the tool that disturbs the open event streams.
const FaultToolName = "demo_fault"

// DemoFaults are the faults demo_fault offers.
var DemoFaults = []string{eventsrv.FaultDisconnect, eventsrv.FaultStall, eventsrv.FaultResume, eventsrv.FaultGap,
	eventsrv.FaultError, eventsrv.FaultTerminate}

// tickArgs are clock.tick's arguments.
type tickArgs struct {
	Seconds *int `json:"seconds"`
}

// tickData is clock.tick's data.
type tickData struct {
	Time string `json:"time"`
	Unix int64  `json:"unix"`
}

// newEvents builds the demo's events source: fs.changed over the root and
// clock.tick, with the retention, heartbeat and state directory of opts.
func newEvents(opts Options, root files) (*eventsrv.Server, *fsWatch, error) {
	clk := clock.Or(opts.Clock)
	var srv *eventsrv.Server
	w := &fsWatch{files: root, clk: clk, every: opts.Poll}
	if w.every <= 0 {
		w.every = DefaultPoll
	}
	w.publish = func(c fsChange) { _, _ = srv.Publish(EventFSChanged, c) }
	w.report = func(err error) {
		f := eventsrv.Fault{Kind: eventsrv.FaultError, Message: "fs.changed: watching works again"}
		if err != nil {
			f.Message = "fs.changed: cannot scan the directory: " + err.Error()
		}
		_, _ = srv.Post(f, eventsrv.Target{Name: EventFSChanged}) // not Inject: the watch's lock is held
	}
	if opts.StateDir != "" {
		w.stateDir = opts.StateDir
		if abs, err := filepath.Abs(opts.StateDir); err == nil {
			w.skip = abs
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				w.skip = real
			}
		}
	}
	tick := &ticker{clk: clk, publish: func(t time.Time) {
		_, _ = srv.Publish(EventClockTick, tickData{Time: t.UTC().Format(time.RFC3339), Unix: t.Unix()})
	}}
	srv, err := eventsrv.New(eventsrv.Options{
		Clock:     clk,
		Heartbeat: opts.Heartbeat,
		StateDir:  opts.StateDir,
	}, eventsrv.Type{
		Name: EventFSChanged,
		Description: "Files created, changed or removed under the server's root directory (polled every " + w.every.String() +
			"). data: {path (relative to the root), change: created|changed|removed, size?}.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"dir":  map[string]any{"type": "string", "description": "only files under this directory, relative to the root"},
			"glob": map[string]any{"type": "string", "description": "only files whose name (or, with a /, whose path under dir) matches, e.g. *.txt"},
		}},
		PayloadSchema: map[string]any{"type": "object", "required": []string{"path", "change"}, "properties": map[string]any{
			"path": map[string]any{"type": "string"}, "change": map[string]any{"enum": []string{"created", "changed", "removed"}},
			"size": map[string]any{"type": "integer"}}},
		Match: matchFS,
		Watch: w.start,
	}, eventsrv.Type{
		Name:        EventClockTick,
		Description: "A tick every N seconds (arguments.seconds, default 1), on whole seconds of the server's clock. data: {time, unix}.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"seconds": map[string]any{"type": "integer", "minimum": 1, "default": 1}}},
		PayloadSchema: map[string]any{"type": "object", "properties": map[string]any{
			"time": map[string]any{"type": "string"}, "unix": map[string]any{"type": "integer"}}},
		Match: matchTick,
		Watch: tick.start,
	})
	if err != nil {
		return nil, nil, err
	}
	return srv, w, nil
}

// matchTick compiles clock.tick's arguments.
func matchTick(raw json.RawMessage) (func(json.RawMessage) bool, error) {
	var a tickArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	n := int64(1)
	if a.Seconds != nil {
		if *a.Seconds < 1 {
			return nil, errors.New("seconds must be at least 1")
		}
		n = int64(*a.Seconds)
	}
	return func(data json.RawMessage) bool {
		var d tickData
		return json.Unmarshal(data, &d) == nil && d.Unix%n == 0
	}, nil
}

// ticker publishes clock.tick on every whole second while it runs.
type ticker struct {
	clk     clock.Clock
	publish func(time.Time)

	mu      sync.Mutex
	running bool        // guarded by mu
	timer   clock.Timer // guarded by mu
}

func (k *ticker) start() (stop func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.running = true
	k.armLocked()
	return k.stop
}

func (k *ticker) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.running = false
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
}

// armLocked arms the timer for the next whole period.
func (k *ticker) armLocked() {
	now := k.clk.Now()
	next := now.Truncate(tickEvery).Add(tickEvery)
	k.timer = k.clk.AfterFunc(next.Sub(now), func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if !k.running {
			return
		}
		k.publish(next)
		k.armLocked()
	})
}
