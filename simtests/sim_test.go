package simtests

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	cmap "github.com/orcaman/concurrent-map"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "TestSim: run only this seed (and print its trace with -v)")
	seedsFlag = flag.Int("seeds", 500, "TestSim: how many seeds to run, from -first-seed on")
	firstSeed = flag.Uint64("first-seed", 1, "TestSim: the first seed of the campaign")
	strict    = flag.Bool("strict", false, "TestSim: fail on known issues too (see known.go)")
	yieldFlag = flag.Bool("yield", false, "replays yield the processor at every post an activation makes, as a preemption would there (see gate.go)")
	procs     = flag.Int("procs", runtime.NumCPU(), "GOMAXPROCS for the simulation (the post gate keeps runs replayable on any number)")
	workers   = flag.Int("workers", 0, "TestSim: seeds run at once, each on its own goroutine and single-threaded (0: GOMAXPROCS)")
)

// heldMidStep counts, over the whole test binary, the posts the gate held
// that arrived during an activation (gate.go): interleavings the Go
// scheduler would otherwise have chosen.
var heldMidStep atomic.Int64

// heldAll counts the posts the gate held: none would mean the runtime no
// longer adds the dispatcher to its mailboxes (actors/env.go).
var heldAll atomic.Int64

// TestMain runs the package on every processor unless -procs says
// otherwise: runs replay byte for byte on any number (the post gate decides
// where host goroutines' posts land, see gate.go), and TestSim runs seeds
// on parallel workers. The test binary first runs itself again with
// GODEBUG=gcshrinkstackoff=1: the garbage collector must never move a
// simulation goroutine's stack (the gate recognises that goroutine by it),
// and with shrinking off it never does, so the collector can run during
// simulations (it used to be off for each run and forced after it).
func TestMain(m *testing.M) {
	if godebug := os.Getenv("GODEBUG"); !strings.Contains(godebug, shrinkOff) {
		if godebug != "" {
			godebug += ","
		}
		env := append(os.Environ(), "GODEBUG="+godebug+shrinkOff)
		exe, err := os.Executable()
		if err == nil {
			err = syscall.Exec(exe, os.Args, env)
		}
		fmt.Fprintf(os.Stderr, "simtests: cannot run again with GODEBUG=%s: %v\n", shrinkOff, err)
		os.Exit(2)
	}
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
	// Every run starts a runtime, whose protoactor system makes a process
	// registry of 1,024 concurrent maps of cmap.SHARD_COUNT shards each:
	// at the default 32 that was 32,768 maps per run and a quarter of the
	// simulator's CPU. The simulation is single-threaded, so lock striping
	// buys nothing: one shard each. Set before any map exists (lookups
	// index by it), in this test binary only; production keeps 32.
	cmap.SHARD_COUNT = 1
	// A run allocates a few MB and keeps little: collect less often.
	debug.SetGCPercent(400)
	os.Exit(m.Run())
}

// shrinkOff is the GODEBUG setting the simulations run with (TestMain).
const shrinkOff = "gcshrinkstackoff=1"

// reproduce is the one command that replays a failing seed.
func reproduce(seed uint64) string {
	return fmt.Sprintf("go test ./simtests -run TestSim -seed=%d -v", seed)
}

// runSeed runs the campaign of one seed in its own bubble and returns its
// trace and the error that ended it, if any. yield makes every post an
// activation makes yield the processor first (Dispatcher.Yield).
func runSeed(t *testing.T, seed uint64, yield bool) (trace string, err error) {
	trace, err = runFlavor(t, seed, yield, Campaign)
	if err != nil {
		return trace, err
	}
	events, err := runFlavor(t, seed, yield, CampaignEvents)
	trace += "=== the events campaign of the seed\n" + events
	if err != nil {
		return trace, err
	}
	shared, err := runFlavor(t, seed, yield, CampaignShared)
	return trace + "=== the shared campaign of the seed\n" + shared, err
}

// runFlavor runs one campaign of a seed.
func runFlavor(t *testing.T, seed uint64, yield bool, campaign func(*World) error) (trace string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.Join(err, fmt.Errorf("panic: %v", p))
		}
	}()
	synctest.Test(t, func(t *testing.T) {
		var anchor byte // the bottom of the simulation goroutine's stack (gate.go)
		w := NewWorld(seed)
		w.Disp.Pin(uintptr(unsafe.Pointer(&anchor)))
		w.Disp.Yield = yield
		err = runCaught(w, campaign)
		if err != nil {
			if derr := runCaught(w, (*World).Drain); derr != nil {
				err = errors.Join(err, fmt.Errorf("while draining: %w", derr))
			}
		}
		if err == nil && w.Disp.Hazards() > 0 {
			err = fmt.Errorf("%d activation(s) scheduled by a host goroutine during an activation: the Go scheduler, not the seed, chose an order", w.Disp.Hazards())
		}
		if err == nil && w.Disp.StackMoved() > 0 {
			err = fmt.Errorf("the simulation goroutine's stack moved (%d posts from off its pinned stack): raise stackReserve in gate.go", w.Disp.StackMoved())
		}
		heldMidStep.Add(int64(w.Disp.HeldMidStep()))
		heldAll.Add(int64(w.Disp.Held()))
		trace = w.Trace()
		endBubble()
	})
	return trace, err
}

// runCaught runs the campaign and turns a panic in the simulation
// goroutine (the world's or the runtime's, when an activation runs on it)
// into the seed's error, with the stack, so the failure names its seed and
// the runtime can still be drained and closed.
func runCaught(w *World, campaign func(*World) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return campaign(w)
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
			before := strings.Join(la[max(0, i-12):i], "\n  ")
			return fmt.Sprintf("line %d, after\n  %s\n  first:  %s\n  second: %s", i+1, before, la[i], lb[i])
		}
	}
	return fmt.Sprintf("one trace is a prefix of the other (%d vs %d lines)", len(la), len(lb))
}

// regressionSeeds are seeds past the CI budget that a long campaign found
// failing once; every campaign runs them too (see docs/simulation.md).
var regressionSeeds = []uint64{
	40214, // a subscribe cancelled while opening: its open reached the server after the next subscribe of the same identity began (checker allowance)
	1655,  // a subscribe's retry-budget streak (6ed4367)
	3531,  // a link waiting twice for a credit (World.unblock)
	6769,  // two subscriptions of one event with different arguments: one retry budget in the checker
	15476,
	4873,  // a subscribe that failed before its acknowledgement: its open stayed, its allowance did not
	1420,  // a stream opened at the very moment of shutdown never ended (Session.abandon)
	10989, // a stream refused at once on a stopped session: ended, not yet noticed, counted as holding a lease
	2850,  // the same
	603,   // two subscriptions of one identity: invariant 21 cannot tell whose sign of life
	897,   // a crashed server actor's streams end when it restarts, not at once
	1329,  // a dial slower than the activation timeout: attempts that reached no server
	2327,  // a crashed server actor's closing connections: shutdown waits for their ConnClosed
	2352,  // a batcher crashing on its shutdown clear: no restart timer once shutdown began
	3296,  // a reopen refused on a session whose connection died: an attempt with no open
	4417,  // a call within failure memory that a server actor crashed on: internal_error, not server_backoff
	4681,  // an events stream crashed: the signs of life on their way to it never reached the subscription
	9223,  // a fresh connect replaced the connection with an event on its way: invariant 21 excuses a close
	12346, // a server actor crashed right after a failed connect: failure memory survives the restart (the record keeps it)
	15767, // a server actor crashed at virtual time 0
	16553, // a subscribe that reused a reconnecting subscription reset invariant 21's count
	21575, // two subscription crashes: two status wakeups past the episodes' bound
	66071, // requests sent on a connection whose ConnClosed was queued: Close did not wait for their "not sent"
	15389, // a dial cancelled at its startup deadline: Close did not wait for its DialResult
	10057, // a lookup answered with a server's listing failure: not a model connect for failure memory
	7998,  // the same
	20177, // the same
	2937,  // a lookup over several servers cancelled: its aborts were posted in map order (tools/mcp_call.go)
	3389,  // the same
	11044, // the same
	745,   // a lookup cancelled while its listing's answer was on its way: the call read the catalog mid-turn (tools/resolve.go, abandoned)
	32234, // the same
	40108, // the same
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
		for _, r := range regressionSeeds {
			if r < *firstSeed || r >= *firstSeed+uint64(*seedsFlag) {
				seeds = append(seeds, r)
			}
		}
	}
	began := time.Now()
	results := runSeeds(t, seeds)
	distinct := map[string]bool{}
	digest := sha256.New()   // of every trace in seed order: equal for equal campaigns, whatever -procs or -workers
	var issues []*KnownIssue // in the order first hit
	known := map[*KnownIssue][]uint64{}
	lines := 0
	for i, seed := range seeds {
		r := results[i]
		if !r.ran {
			break // after a failing seed: the loop has stopped at it
		}
		first, err, second, err2 := r.first, r.err, r.second, r.err2
		var k *KnownIssue
		if errors.As(err, &k) && !*strict {
			if known[k] == nil {
				issues = append(issues, k)
			}
			known[k] = append(known[k], seed)
		} else if err != nil {
			t.Fatalf("seed %d: %v\n%s\nreproduce with: %s", seed, err, tail(first, 60), reproduce(seed))
		}
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("seed %d: the second run ended differently: %v\nreproduce with: %s", seed, err2, reproduce(seed))
		}
		if first != second {
			t.Fatalf("seed %d: the two runs' traces differ at %s\nreproduce with: %s", seed, firstDiff(first, second), reproduce(seed))
		}
		distinct[first] = true
		digest.Write([]byte(first))
		lines += strings.Count(first, "\n")
		if len(seeds) == 1 && testing.Verbose() {
			t.Log("\n" + first)
		}
	}
	if len(seeds) > 4 && heldAll.Load() == 0 {
		t.Fatalf("the post gate held no host post in %d seeds: does the runtime still add the dispatcher to every mailbox (actors/env.go)?", len(seeds))
	}
	if len(seeds) > 4 && len(distinct) < len(seeds)/2 {
		t.Fatalf("%d seeds gave only %d distinct traces: the campaign is not exploring", len(seeds), len(distinct))
	}
	took := time.Since(began)
	t.Logf("%d seeds run twice each, all replayed byte for byte: %d distinct traces, %d trace lines per run (digest %x), %s on %d worker(s) (%.0f seeds/minute); %d host posts arrived during an activation and were held (gate.go)",
		len(seeds), len(distinct), lines, digest.Sum(nil)[:6], took.Round(time.Millisecond), workerCount(), float64(len(seeds))/took.Minutes(), heldMidStep.Load())
	t.Logf("events campaigns (both runs of each seed): %d subscriptions, %d events and %d status items delivered, %d events counted dropped, %d active subscriptions accounted at checkpoints, %d actor crashes injected",
		evTotals.subscriptions.Load(), evTotals.delivered.Load(), evTotals.statusItems.Load(), evTotals.dropped.Load(), evTotals.accounted.Load(), crashTotals.Load())
	t.Logf("host operations answered (both runs of each seed): %d, of which %d tool calls", hostTotals.ops.Load(), hostTotals.calls.Load())
	t.Logf("shared campaigns (both runs of each seed): %d sessions attached, %d ended by the member, %d calls answered at sessions, %d events delivered to sessions, %d hop messages dropped, %d session subscriptions accounted at checkpoints, %d questions put to sessions, %d subscribes run again (answered with a subscription being ended), %d requests refused at a session's limit, %d typed subscriptions held",
		sharedTotals.sessions.Load(), sharedTotals.ended.Load(), sharedTotals.answered.Load(), sharedTotals.delivered.Load(), sharedTotals.dropped.Load(), sharedTotals.accounted.Load(), sharedTotals.questions.Load(), sharedTotals.reruns.Load(), sharedTotals.refused.Load(), sharedTotals.typed.Load())
	if len(seeds) >= 100 && (evTotals.accounted.Load() == 0 || evTotals.statusItems.Load() == 0) {
		t.Fatalf("the events campaigns accounted no subscription or delivered no status: they no longer exercise events")
	}
	for _, k := range issues {
		ss := known[k]
		t.Logf("%s: hit by %d seed(s), first %d (%s; -strict fails on it)", k, len(ss), ss[0], reproduce(ss[0]))
	}
}

// seedResult is what the two runs of one seed gave.
type seedResult struct {
	ran           bool
	first, second string
	err, err2     error
}

// workerCount is how many seeds run at once.
func workerCount() int {
	if *workers > 0 {
		return *workers
	}
	return runtime.GOMAXPROCS(0)
}

// runSeeds runs every seed twice (the second run with -yield when set) on
// parallel workers: each seed's runs stay on one goroutine, single-threaded
// in their bubbles, so each replays byte for byte whatever runs beside it.
// Workers take seeds in order; after a seed fails (or its replay differs),
// no later seed starts, and every earlier one finishes, so the caller
// reports the first failing seed in seed order.
func runSeeds(t *testing.T, seeds []uint64) []seedResult {
	results := make([]seedResult, len(seeds))
	var next atomic.Int64
	var stop atomic.Int64 // the lowest index that failed; len(seeds) while none has
	stop.Store(int64(len(seeds)))
	var wg sync.WaitGroup
	for range min(workerCount(), len(seeds)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(seeds)) || i > stop.Load() {
					return
				}
				r := &results[i]
				r.first, r.err = runSeed(t, seeds[i], false)
				if f := os.Getenv("SIMTRACE"); f != "" { // the whole first trace (a failure prints its tail)
					_ = os.WriteFile(f, []byte(r.first), 0o644)
				}
				r.second, r.err2 = runSeed(t, seeds[i], *yieldFlag)
				r.ran = true
				var k *KnownIssue
				known := errors.As(r.err, &k) && !*strict
				if (r.err != nil && !known) || r.first != r.second || (r.err == nil) != (r.err2 == nil) {
					for {
						cur := stop.Load()
						if i >= cur || stop.CompareAndSwap(cur, i) {
							break
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	return results
}
