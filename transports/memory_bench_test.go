package transports

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// peakRSS returns the process's peak resident set size (VmHWM) in bytes.
func peakRSS(tb testing.TB) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	tb.Skip("no VmHWM")
	return 0
}

// resetPeakRSS resets VmHWM (Linux: "5" to /proc/self/clear_refs).
func resetPeakRSS(tb testing.TB) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		tb.Skip("cannot reset the peak RSS")
	}
}

// TestPeakRSS (issue 13 item 5) measures the client's peak RSS while n
// concurrent calls over Streamable HTTP each get a JSON answer of about
// size bytes from the test server (a separate process): 64 answers of 17
// MiB (each over the 16 MiB limit, refused) and 32 of 15 MiB (valid). It
// runs only with MCPRT_PEAK_RSS set to the case's name, one case per
// process, since the peak is the process's:
//
//	MCPRT_PEAK_RSS=over17MiBx64 go test -run TestPeakRSS -v ./transports/
//
// docs/performance.md records the figures.
func TestPeakRSS(t *testing.T) {
	which := os.Getenv("MCPRT_PEAK_RSS")
	if which == "" {
		t.Skip("set MCPRT_PEAK_RSS=over17MiBx64 or valid15MiBx32")
	}
	cases := map[string]struct{ n, size int }{"over17MiBx64": {64, 17 << 20}, "valid15MiBx32": {32, 15 << 20}}
	bc, ok := cases[which]
	if !ok {
		t.Fatalf("unknown case %q", which)
	}
	d := newDialer(t)
	if v := os.Getenv("MCPRT_PEAK_RSS_BUDGET"); v != "" {
		n, _ := strconv.ParseInt(v, 10, 64)
		d.ResponseBudget = n
	}
	// The server is in this process (a separate one spent minutes
	// encoding 64 × 17 MiB): it writes one shared, precomputed text, so it
	// adds that text's size once to the baseline and nothing per call.
	text := []byte(strings.Repeat("x", bc.size))
	url := fakeHTTPServer(t, func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"`))
		_, _ = w.Write(text)
		_, _ = w.Write([]byte(`"}]}}`))
	})
	// A sink that keeps no result (the recorder would hold them all).
	var mu sync.Mutex
	kinds := map[string]int{}
	done := make(chan struct{}, bc.n+1)
	var conn messages.Conn
	opened := make(chan struct{})
	closed := make(chan struct{})
	d.Dial(dialRequest(messages.Endpoint{URL: url + "/mcp"}), func(m any) {
		switch m := m.(type) {
		case messages.DialResult:
			if m.Err != nil {
				t.Error(m.Err)
			}
			conn = m.Conn
			close(opened)
		case messages.OpResult:
			k := "ok"
			if m.Err != nil {
				k = m.Err.Kind.Code()
			}
			mu.Lock()
			kinds[k]++
			mu.Unlock()
			done <- struct{}{}
		case messages.ConnClosed:
			close(closed)
		}
	})
	<-opened
	if conn == nil {
		t.FailNow()
	}
	defer func() {
		conn.Close()
		<-closed
	}()
	conn.Send(messages.Op{ID: 1, Method: "tools/call", Params: toolParams("big", nil)})
	<-done
	kinds = map[string]int{}
	before := peakRSS(t)
	runtime.GC()
	resetPeakRSS(t)
	for i := 0; i < bc.n; i++ {
		conn.Send(messages.Op{ID: messages.OpID(i + 2), Method: "tools/call", Params: toolParams("big", nil)})
	}
	for i := 0; i < bc.n; i++ {
		<-done
	}
	peak := peakRSS(t)
	t.Logf("%s: peak RSS %d MiB (before the calls %d MiB); outcomes %v", which, peak>>20, before>>20, kinds)
}
