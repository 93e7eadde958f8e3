package simtests

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "TestSim: run only this seed (and print its trace with -v)")
	seedsFlag = flag.Int("seeds", 500, "TestSim: how many seeds to run, from -first-seed on")
	firstSeed = flag.Uint64("first-seed", 1, "TestSim: the first seed of the campaign")
	strict    = flag.Bool("strict", false, "TestSim: fail on known issues too (see known.go)")
)

// TestMain runs the package on one processor: a host goroutine woken from
// inside an activation then runs only once that activation has finished,
// so the order of posts never depends on the Go scheduler (see doc.go).
func TestMain(m *testing.M) {
	runtime.GOMAXPROCS(1)
	os.Exit(m.Run())
}

// reproduce is the one command that replays a failing seed.
func reproduce(seed uint64) string {
	return fmt.Sprintf("go test ./simtests -run TestSim -seed=%d -v", seed)
}

// runSeed runs the campaign of one seed in its own bubble and returns its
// trace and the error that ended it, if any.
func runSeed(t *testing.T, seed uint64) (trace string, err error) {
	defer noGC()()
	defer func() {
		if p := recover(); p != nil {
			err = errors.Join(err, fmt.Errorf("panic: %v", p))
		}
	}()
	synctest.Test(t, func(t *testing.T) {
		w := NewWorld(seed)
		err = Campaign(w)
		if err != nil {
			if derr := w.Drain(); derr != nil {
				err = errors.Join(err, fmt.Errorf("while draining: %w", derr))
			}
		}
		if err == nil && w.Disp.Hazards() > 0 {
			err = fmt.Errorf("%d activation(s) scheduled by a host goroutine during an activation: the Go scheduler, not the seed, chose an order", w.Disp.Hazards())
		}
		trace = w.Trace()
		endBubble()
	})
	return trace, err
}

// noGC turns the garbage collector off until the returned function runs.
// A stop-the-world pause that lands in the middle of an activation puts
// the activation's goroutine back on the run queue behind the host
// goroutine it has just woken, which then runs first: the Go scheduler,
// not the seed, would decide where that host goroutine's next post lands.
// A run allocates a few MB, so it runs without collection and the heap is
// collected between runs.
func noGC() func() {
	old := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(old)
		runtime.GC()
	}
}

// endBubble lets protoactor's dead-letter throttle end before the bubble
// does: the first message sent to a stopped actor (a late port outcome
// after Close, say) starts a goroutine in protoactor that waits on a
// time.NewTicker of DeadLetterThrottleInterval (1 s) before it exits. Once
// the bubble's main goroutine has returned, bubble time no longer moves, so
// that goroutine would block forever and synctest would report a deadlock.
// This waits on the bubble's fake clock (no real time passes), after the
// trace is taken, so it never affects a run.
func endBubble() {
	timer := time.NewTimer(2 * time.Second)
	<-timer.C
}

// tail returns the last n lines of a trace.
func tail(trace string, n int) string {
	lines := strings.Split(strings.TrimRight(trace, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// firstDiff returns the first line where two traces differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  first:  %s\n  second: %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("one trace is a prefix of the other (%d vs %d lines)", len(la), len(lb))
}

// TestSim runs the seed campaign: every seed twice, requiring no broken
// invariant and byte-identical traces. A failure names the seed and the one
// command that reproduces it.
func TestSim(t *testing.T) {
	seeds := make([]uint64, 0, *seedsFlag)
	if *seedFlag != 0 {
		seeds = append(seeds, *seedFlag)
	} else {
		for i := 0; i < *seedsFlag; i++ {
			seeds = append(seeds, *firstSeed+uint64(i))
		}
	}
	began := time.Now()
	distinct := map[string]bool{}
	var issues []*KnownIssue // in the order first hit
	known := map[*KnownIssue][]uint64{}
	lines := 0
	for _, seed := range seeds {
		first, err := runSeed(t, seed)
		var k *KnownIssue
		if errors.As(err, &k) && !*strict {
			if known[k] == nil {
				issues = append(issues, k)
			}
			known[k] = append(known[k], seed)
		} else if err != nil {
			t.Fatalf("seed %d: %v\n%s\nreproduce with: %s", seed, err, tail(first, 60), reproduce(seed))
		}
		second, err2 := runSeed(t, seed)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("seed %d: the second run ended differently: %v\nreproduce with: %s", seed, err2, reproduce(seed))
		}
		if first != second {
			t.Fatalf("seed %d: the two runs' traces differ at %s\nreproduce with: %s", seed, firstDiff(first, second), reproduce(seed))
		}
		distinct[first] = true
		lines += strings.Count(first, "\n")
		if len(seeds) == 1 && testing.Verbose() {
			t.Log("\n" + first)
		}
	}
	if len(seeds) > 4 && len(distinct) < len(seeds)/2 {
		t.Fatalf("%d seeds gave only %d distinct traces: the campaign is not exploring", len(seeds), len(distinct))
	}
	t.Logf("%d seeds run twice each, all replayed byte for byte: %d distinct traces, %d trace lines per run, %s",
		len(seeds), len(distinct), lines, time.Since(began).Round(time.Millisecond))
	for _, k := range issues {
		ss := known[k]
		t.Logf("%s: hit by %d seed(s), first %d (%s; -strict fails on it)", k, len(ss), ss[0], reproduce(ss[0]))
	}
}
