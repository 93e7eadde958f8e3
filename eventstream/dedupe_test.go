package eventstream

import (
	"fmt"
	"runtime"
	"testing"
)

func TestWindowFirstSeenOrder(t *testing.T) {
	tests := []struct {
		name string
		size int
		ids  []string
		want string // one letter per id: n new, d duplicate
	}{
		{"duplicates suppressed", 3, []string{"a", "b", "a", "c", "b"}, "nndnd"},
		{"oldest forgotten first", 2, []string{"a", "b", "c", "a"}, "nnnn"},
		{"a duplicate does not refresh its place", 2, []string{"a", "b", "a", "c", "a", "b"}, "nndnnn"},
		{"size one", 1, []string{"a", "a", "b", "a"}, "ndnn"},
		{"size below one is one", 0, []string{"a", "a"}, "nd"},
	}
	for _, tt := range tests {
		w := NewWindow(tt.size)
		got := ""
		for _, id := range tt.ids {
			if w.Seen(id) {
				got += "d"
			} else {
				got += "n"
			}
		}
		if got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestWindowHoldsExactlySize(t *testing.T) {
	w := NewWindow(DefaultDedupeWindow)
	for i := range 3 * DefaultDedupeWindow {
		if w.Seen(fmt.Sprint("id-", i)) {
			t.Fatalf("id %d taken for a duplicate", i)
		}
	}
	if w.Len() != DefaultDedupeWindow || cap(w.ring) != DefaultDedupeWindow || len(w.set) != DefaultDedupeWindow {
		t.Fatalf("len %d ring cap %d set %d", w.Len(), cap(w.ring), len(w.set))
	}
	// The last 10,000 are remembered, the ones before are not.
	if !w.Seen(fmt.Sprint("id-", 3*DefaultDedupeWindow-1)) || !w.Seen(fmt.Sprint("id-", 2*DefaultDedupeWindow)) {
		t.Fatal("a recent id was forgotten")
	}
	if w.Seen(fmt.Sprint("id-", 2*DefaultDedupeWindow-1)) {
		t.Fatal("an evicted id is still remembered")
	}
}

// windowBytes measures the heap a full window keeps, averaged over n
// windows filled with churn (3× the window through each), ids of idLen
// bytes.
func windowBytes(n, idLen int) float64 {
	ids := make([]string, 3*DefaultDedupeWindow)
	for i := range ids {
		s := fmt.Sprintf("%0*d", idLen, i)
		ids[i] = s
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ws := make([]*Window, n)
	for i := range ws {
		ws[i] = NewWindow(DefaultDedupeWindow)
		for _, id := range ids {
			ws[i].Seen(id)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ws)
	runtime.KeepAlive(ids)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// BenchmarkWindowFullMemory reports the heap of one full 10,000-id window
// (bytes/window) for short and UUID-length ids; the hashes make it
// independent of the ids' length. Run: go test ./eventstream -run XXX
// -bench WindowFullMemory -benchtime 1x
func BenchmarkWindowFullMemory(b *testing.B) {
	for _, idLen := range []int{8, 36, 1024} {
		b.Run(fmt.Sprintf("id%d", idLen), func(b *testing.B) {
			var per float64
			for range b.N {
				per = windowBytes(4, idLen)
			}
			b.ReportMetric(per, "bytes/window")
			b.ReportMetric(per/(1<<20), "MiB/window")
		})
	}
}

// BenchmarkWindowSeen is the per-event cost in a full window, 5% duplicates.
func BenchmarkWindowSeen(b *testing.B) {
	ids := make([]string, 1<<16)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt-%08d-%s", i, "0123456789abcdef0123456789")
	}
	w := NewWindow(DefaultDedupeWindow)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		j := i
		if i%20 == 0 && i > 0 {
			j = i - 1 // a duplicate of the previous id
		}
		w.Seen(ids[j&(len(ids)-1)])
	}
}

// TestWindowMemoryBudget keeps a full window within the 0.6 MiB budget of
// performance.md. It measures heap bytes (not time), averaged over 8
// windows, after the window has been churned three times through.
func TestWindowMemoryBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("memory measurement")
	}
	const budget = 0.6 * (1 << 20)
	if per := windowBytes(8, 36); per > budget {
		t.Fatalf("a full window keeps %.0f bytes (%.2f MiB), over the 0.6 MiB budget", per, per/(1<<20))
	} else {
		t.Logf("a full window keeps %.0f bytes (%.3f MiB)", per, per/(1<<20))
	}
}
