package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
)

// The events benchmarks (docs/performance.md, "MCP events"): events from
// the blast server (events_server_test.go, a separate process) through
// the runtime to Host.Deliver with dedupe on, against a bare loop that
// reads the same frames from the same server and only decodes them (typed,
// encoding/json) and dedupes them.

// countHost counts the events delivered (and dropped) in events wakeups
// and says when want of them were told.
type countHost struct {
	mu                 sync.Mutex
	delivered, dropped int
	batches            int
	want               int
	done               chan struct{}
}

func newCountHost(want int) *countHost { return &countHost{want: want, done: make(chan struct{})} }

func (h *countHost) Deliver(_ context.Context, m messages.HostMessage) {
	d, ok := m.Details.(eventstream.EventsDetails)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.delivered += len(d.Events)
	h.dropped += d.DroppedEvents
	h.batches++
	if h.delivered+h.dropped >= h.want && h.done != nil {
		close(h.done)
		h.done = nil
	}
}

func (h *countHost) Notify(context.Context, messages.Notice) {}

// blastConfig runs the test binary as the blast server over stdio.
func blastConfig(b *testing.B) config.Server {
	return config.Server{Command: testenv.Self(b), Env: map[string]string{envBlast: "1"}, ProtocolVersion: messages.Protocol20251125}
}

// roundResult is one burst through the runtime or the bare loop.
type roundResult struct {
	dur                time.Duration
	delivered, dropped int
	batches            int
	peakHeap, peakHeld uint64 // highest heap objects and memory held above the start (bytes)
}

// runtimeRound subscribes through the mcp_events tool, starts the burst
// with the server's "go" tool and waits until every distinct event was
// delivered or counted as dropped.
func runtimeRound(b *testing.B, count int, batch eventstream.BatchLimits, sample bool) roundResult {
	ctx := context.Background()
	h := newCountHost(uniqueEvents(count))
	rt, err := mcprt.Start(ctx, mcprt.Options{Host: h, Sim: &simseam.Seams{EventBatch: batch}, AgentDir: b.TempDir(),
		Config: &config.File{MCPServers: map[string]config.Server{"blast": blastConfig(b)}}})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	ev, _ := rt.Tool(mcprt.EventsToolName)
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	if r := ev.Execute(ctx, json.RawMessage(fmt.Sprintf(`{"action":"subscribe","server":"blast","name":%q,"arguments":{"count":%d}}`, blastEvent, count))); r.IsError {
		b.Fatal(r.Text)
	}
	var s *heapSampler
	if sample {
		s = startSampler()
	}
	start := time.Now()
	if r := mcp.Execute(ctx, json.RawMessage(`{"tool":"go","server":"blast"}`)); r.IsError {
		b.Fatal(r.Text)
	}
	h.mu.Lock()
	done := h.done
	h.mu.Unlock()
	if done != nil {
		<-done
	}
	res := roundResult{dur: time.Since(start)}
	if s != nil {
		res.peakHeap, res.peakHeld = s.stop()
	}
	h.mu.Lock()
	res.delivered, res.dropped, res.batches = h.delivered, h.dropped, h.batches
	h.mu.Unlock()
	return res
}

// bareFrame is a notification decoded the practical way: typed, in one
// pass, with encoding/json.
type bareFrame struct {
	Method string `json:"method"`
	Params struct {
		EventID   string          `json:"eventId"`
		Name      string          `json:"name"`
		Timestamp string          `json:"timestamp"`
		Cursor    *string         `json:"cursor"`
		Data      json.RawMessage `json:"data"`
		Meta      struct {
			Subscription json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	} `json:"params"`
}

// bareRound reads the same burst from its own blast server: each line
// decoded typed and its eventId deduped, nothing else.
func bareRound(b *testing.B, count int, sample bool) roundResult {
	cmd := exec.Command(testenv.Self(b))
	cmd.Env = append(os.Environ(), envBlast+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	br := bufio.NewReaderSize(out, 64<<10)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":1,"method":"events/stream","params":{"name":%q,"arguments":{"count":%d},"cursor":null}}`+"\n", blastEvent, count)
	if _, err := br.ReadSlice('\n'); err != nil { // active
		b.Fatal(err)
	}
	w := eventstream.NewWindow(eventstream.DefaultDedupeWindow)
	var s *heapSampler
	if sample {
		s = startSampler()
	}
	start := time.Now()
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"go","arguments":{}}}`+"\n")
	res := roundResult{}
	for seen := 0; seen < count; {
		line, err := br.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		var f bareFrame
		if json.Unmarshal(line, &f) != nil || f.Method != "notifications/events/event" {
			continue
		}
		seen++
		if !w.Seen(f.Params.EventID) {
			res.delivered++
		}
	}
	res.dur = time.Since(start)
	if s != nil {
		res.peakHeap, res.peakHeld = s.stop()
	}
	return res
}

// heapSampler records, every millisecond, the heap (bytes of heap objects,
// live or not yet collected) and the memory the Go runtime holds from the
// system (all its classes but released heap), and their highest values
// above the start.
type heapSampler struct {
	base, peak         uint64
	baseHeld, peakHeld uint64
	quit, done         chan struct{}
}

var memSamples = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}

// readMem returns the heap objects' bytes and the bytes held from the
// system. Only one sampler runs at a time.
func readMem() (heap, held uint64) {
	metrics.Read(memSamples)
	return memSamples[0].Value.Uint64(), memSamples[1].Value.Uint64() - memSamples[2].Value.Uint64()
}

func heapObjects() uint64 {
	h, _ := readMem()
	return h
}

func startSampler() *heapSampler {
	runtime.GC()
	s := &heapSampler{quit: make(chan struct{}), done: make(chan struct{})}
	s.base, s.baseHeld = readMem()
	go func() {
		defer close(s.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			h, held := readMem()
			s.peak = max(s.peak, h-min(h, s.base))
			s.peakHeld = max(s.peakHeld, held-min(held, s.baseHeld))
			select {
			case <-t.C:
			case <-s.quit:
				return
			}
		}
	}()
	return s
}

// stop ends sampling and returns the peaks: heap objects and memory held.
func (s *heapSampler) stop() (uint64, uint64) {
	close(s.quit)
	<-s.done
	return s.peak, s.peakHeld
}

// tinyWindow takes the batch window and the batch caps out of the
// throughput measurement: batches flush after a millisecond and never
// drop.
var tinyWindow = eventstream.BatchLimits{Window: time.Millisecond, MaxItems: 1 << 30, MaxChars: 1 << 40}

// BenchmarkEventsThroughput compares, in one process and alternating, the
// events per second from the blast server to Host.Deliver through the
// runtime (the mcp_events subscription, dedupe on, a 1 ms batch window)
// with the bare decode-and-dedupe loop on the same frames, with
// GOMAXPROCS 1 and 2 (the server is a separate process). Each alternation
// is one burst of 100,000 events each way:
//
//	go test ./internal/bench -run '^$' -bench EventsThroughput -benchtime 5x
func BenchmarkEventsThroughput(b *testing.B) {
	const count = 100_000
	for _, procs := range []int{1, 2} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			bareRound(b, 10_000, false) // warm up
			runtimeRound(b, 10_000, tinyWindow, false)
			var bare, rt, ratio, batch []float64
			b.ResetTimer()
			for a := range b.N {
				var br, rr roundResult
				if a%2 == 0 {
					br, rr = bareRound(b, count, false), runtimeRound(b, count, tinyWindow, false)
				} else {
					rr, br = runtimeRound(b, count, tinyWindow, false), bareRound(b, count, false)
				}
				if br.delivered != uniqueEvents(count) || rr.delivered != uniqueEvents(count) || rr.dropped != 0 {
					b.Fatalf("bare delivered %d, runtime %d (dropped %d), want %d", br.delivered, rr.delivered, rr.dropped, uniqueEvents(count))
				}
				bt, rtt := float64(count)/br.dur.Seconds(), float64(count)/rr.dur.Seconds()
				bare, rt, ratio = append(bare, bt), append(rt, rtt), append(ratio, rtt/bt)
				batch = append(batch, float64(rr.delivered)/float64(rr.batches))
			}
			b.StopTimer()
			b.ReportMetric(median(bare), "bare-events/s")
			b.ReportMetric(median(rt), "rt-events/s")
			b.ReportMetric(median(ratio), "ratio")
			b.ReportMetric(median(batch), "events/batch")
		})
	}
}

// BenchmarkEventsBurstMemory sends a burst of 1,000,000 events through the
// runtime with the production batch limits (500 ms windows of at most 256
// events: nearly all are dropped and counted) and through the bare loop,
// and reports the peaks above the start of each, sampled every
// millisecond: heap objects (live or not yet collected) and the memory the
// Go runtime holds from the system:
//
//	go test ./internal/bench -run '^$' -bench EventsBurstMemory -benchtime 1x
func BenchmarkEventsBurstMemory(b *testing.B) {
	const count = 1_000_000
	var bare, rt, bareHeld, rtHeld, rtSecs, dropped []float64
	for range b.N {
		br := bareRound(b, count, true)
		rr := runtimeRound(b, count, eventstream.BatchLimits{}, true)
		if rr.delivered+rr.dropped != uniqueEvents(count) {
			b.Fatalf("runtime delivered %d and dropped %d of %d", rr.delivered, rr.dropped, uniqueEvents(count))
		}
		bare, rt = append(bare, float64(br.peakHeap)/(1<<20)), append(rt, float64(rr.peakHeap)/(1<<20))
		bareHeld, rtHeld = append(bareHeld, float64(br.peakHeld)/(1<<20)), append(rtHeld, float64(rr.peakHeld)/(1<<20))
		rtSecs, dropped = append(rtSecs, rr.dur.Seconds()), append(dropped, float64(rr.dropped))
	}
	b.ReportMetric(median(bare), "bare-heap-MiB")
	b.ReportMetric(median(rt), "rt-heap-MiB")
	b.ReportMetric(median(bareHeld), "bare-held-MiB")
	b.ReportMetric(median(rtHeld), "rt-held-MiB")
	b.ReportMetric(median(rtSecs), "rt-s")
	b.ReportMetric(median(dropped), "rt-dropped")
}

// BenchmarkEventsIdleSubscriptionMemory reports the heap one more idle
// subscription (acknowledged, no event yet) costs in a running runtime:
// the record, its actor, its stream and the dedupe window before its first
// event, averaged over 99 (the first opens the connection and the events
// session, which the others share):
//
//	go test ./internal/bench -run '^$' -bench EventsIdleSubscriptionMemory -benchtime 3x
func BenchmarkEventsIdleSubscriptionMemory(b *testing.B) {
	var per []float64
	for range b.N {
		ctx := context.Background()
		rt, err := mcprt.Start(ctx, mcprt.Options{AgentDir: b.TempDir(),
			Config: &config.File{MCPServers: map[string]config.Server{"blast": blastConfig(b)}}})
		if err != nil {
			b.Fatal(err)
		}
		ev, _ := rt.Tool(mcprt.EventsToolName)
		sub := func(i int) {
			if r := ev.Execute(ctx, json.RawMessage(fmt.Sprintf(`{"action":"subscribe","server":"blast","name":%q,"arguments":{"count":0,"i":%d}}`, blastEvent, i))); r.IsError {
				b.Fatal(r.Text)
			}
		}
		sub(0)
		runtime.GC()
		before := heapObjects()
		for i := 1; i < 100; i++ {
			sub(i)
		}
		runtime.GC()
		per = append(per, float64(heapObjects()-before)/99)
		rt.Close()
	}
	b.ReportMetric(median(per), "bytes/sub")
}
