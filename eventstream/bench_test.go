package eventstream

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

// frames returns n event frames of about 280 bytes, 5% duplicates, as
// performance.md's events benchmark uses.
func benchFrames(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		id := i
		if i%20 == 19 {
			id = i - 1
		}
		out[i] = json.RawMessage(fmt.Sprintf(`{"eventId":"evt-%09d","name":"fs.changed","timestamp":"2026-01-01T00:00:00.000Z",`+
			`"cursor":"cur-%09d","data":{"path":"/tmp/demo/dir/file-%06d.txt","op":"write","size":1234},`+
			`"_meta":{"io.modelcontextprotocol/subscriptionId":"mcp-extension-1234-1"}}`, id, i, id%1000000))
	}
	return out
}

// BenchmarkDecodeDedupe is the floor: typed decode and dedupe only.
func BenchmarkDecodeDedupe(b *testing.B) {
	frames := benchFrames(1 << 14)
	w := NewWindow(DefaultDedupeWindow)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		f := Decode(MethodEvent, frames[i&(len(frames)-1)])
		w.Seen(f.Event.EventID)
	}
}

// BenchmarkPurePipeline is the pure events path per frame: decode, the
// subscription, PrepareEvent and the batcher (flushed every 256 items, the
// 500 ms window not counted). Compare with BenchmarkDecodeDedupe.
func BenchmarkPurePipeline(b *testing.B) {
	frames := benchFrames(1 << 14)
	s, _ := NewSubscription(Spec{ID: "s", Server: "demo", Name: "fs.changed"}, Limits{})
	s.Start()
	s.Frame(t0, 1, Decode(MethodActive, json.RawMessage(`{"cursor":null}`)))
	batch := NewEventBatcher(BatchLimits{})
	var token uint64
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for _, e := range s.Frame(t0, 1, Decode(MethodEvent, frames[i&(len(frames)-1)])) {
			if d, ok := e.(Deliver); ok {
				enc, _ := PrepareEvent(d.Item)
				if arm := batch.Add(enc); arm != nil {
					token = arm[0].(Arm).Token
				}
			}
		}
		if n, _ := batch.Pending(); n == DefaultBatchItems {
			batch.Fire(token)
		}
	}
}

// BenchmarkIdleSubscriptionMemory reports the heap one active subscription
// keeps before its first event (bytes/sub), averaged over 1,000.
func BenchmarkIdleSubscriptionMemory(b *testing.B) {
	var per float64
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		subs := make([]*Subscription, 1000)
		for i := range subs {
			s, _ := NewSubscription(Spec{ID: fmt.Sprint("sub-", i), Server: "demo", Name: "fs.changed",
				Arguments: json.RawMessage(`{"dir":"/tmp/demo","glob":"*.txt"}`)}, Limits{})
			s.Start()
			s.Frame(t0, 1, Decode(MethodActive, json.RawMessage(`{"cursor":"c0"}`)))
			subs[i] = s
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(subs)
		per = float64(after.HeapAlloc-before.HeapAlloc) / float64(len(subs))
	}
	b.ReportMetric(per, "bytes/sub")
}
