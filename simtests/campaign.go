package simtests

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Campaign runs one random session for w.Seed: a random configuration of
// 1 to 5 simulated servers (every lifecycle mode, pagination, deadlines,
// fault rates), then a random sequence of host operations, faults, time
// jumps and partial runs, a lease check with nothing in flight, and
// Close (in one run in four after a few more steps, wherever they left
// the session). Every choice comes from generators seeded by w.Seed, so the
// whole run, trace included, is a function of the seed. Call it inside a
// synctest bubble.
func Campaign(w *World) error {
	r := rand.New(rand.NewPCG(w.Seed, 0xca4a))
	c := &campaign{w: w, r: r}
	c.configure()
	if err := w.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	for i, n := 0, 10+r.IntN(60); i < n; i++ {
		if err := c.op(); err != nil {
			return err
		}
	}
	// Every run checks leases while nothing is in flight (quiesce); one in
	// four then goes on for a few more steps, so that Close also comes
	// while work is in flight.
	more := r.IntN(4) == 0
	if err := c.quiesce(); err != nil {
		return err
	}
	if more {
		for i, n := 0, 1+r.IntN(6); i < n; i++ {
			if err := c.op(); err != nil {
				return err
			}
		}
	}
	return c.shutdown()
}

// campaign is the state of one random session.
type campaign struct {
	w     *World
	r     *rand.Rand
	n     int  // host operations started
	proto bool // the session uses the protocol-extension API too
	// The events campaign (campaign_events.go): its own generator, so
	// that the plain campaign of a seed stays what it was.
	er     *rand.Rand
	events bool
	sr     *rand.Rand // the shared campaign's (campaign_shared.go)
}

func (c *campaign) pick(options ...time.Duration) time.Duration {
	return options[c.r.IntN(len(options))]
}

// configure draws the servers.
func (c *campaign) configure() {
	r := c.r
	c.proto = r.IntN(3) != 0
	modes := []string{"", "", "eager", "keep-alive", "lazy-keep-alive"}
	rates := []float64{0, 0, 0.03, 0.1, 0.25}
	for i, n := 0, 1+r.IntN(5); i < n; i++ {
		s := &Server{Name: fmt.Sprintf("s%d", i), Lifecycle: modes[r.IntN(len(modes))], PageSize: r.IntN(3)}
		for j, m := 0, 1+r.IntN(4); j < m; j++ {
			s.Tools = append(s.Tools, fmt.Sprintf("tool%d%c", i, 'a'+j))
		}
		if k := r.IntN(5); k > 0 {
			idle := []time.Duration{0, 30 * time.Second, time.Minute, 5 * time.Minute}[k-1]
			s.Idle = &idle
		}
		s.Startup = c.pick(0, 2*time.Second, 10*time.Second)
		s.Call = c.pick(0, 5*time.Second, 20*time.Second)
		s.Catalog = c.pick(0, 3*time.Second)
		s.ExitDelay = c.pick(0, 0, 50*time.Millisecond, 2*time.Second)
		s.ReapDelay = c.pick(0, 0, 10*time.Millisecond, 3*time.Second)
		s.Disabled = r.IntN(20) == 0
		rate := rates[r.IntN(len(rates))]
		s.chaos = &chaos{rng: rand.New(rand.NewPCG(c.w.Seed, uint64(i+1))),
			dialFail: rate, dialSlow: rate / 2, crashAtConnect: rate / 2,
			hang: rate / 3, rpcErr: rate / 2, toolErr: rate / 2, crashBefore: rate / 3, crashAfter: rate / 3,
			instant: 0.5, long: 0.03, maxLatency: 500 * time.Millisecond, longLatency: 90 * time.Second}
		c.w.AddServer(s)
		c.w.Tracef("config %s", describeServer(s, rate))
	}
}

// describeServer renders a campaign server's configuration for the trace.
func describeServer(s *Server, rate float64) string {
	parts := []string{s.Name, "tools=" + strings.Join(s.Tools, ",")}
	if s.Lifecycle != "" {
		parts = append(parts, "lifecycle="+s.Lifecycle)
	}
	if s.Idle != nil {
		parts = append(parts, "idle="+s.Idle.String())
	}
	for _, kv := range []struct {
		k string
		v time.Duration
	}{{"startup", s.Startup}, {"call-timeout", s.Call}, {"catalog-timeout", s.Catalog}, {"exit", s.ExitDelay}, {"reap", s.ReapDelay}} {
		if kv.v > 0 {
			parts = append(parts, kv.k+"="+kv.v.String())
		}
	}
	if s.PageSize > 0 {
		parts = append(parts, fmt.Sprintf("page=%d", s.PageSize))
	}
	if s.Disabled {
		parts = append(parts, "disabled")
	}
	return strings.Join(append(parts, fmt.Sprintf("fault-rate=%g", rate)), " ")
}

func (c *campaign) id(prefix string) string {
	c.n++
	return fmt.Sprintf("%s%d", prefix, c.n)
}

func (c *campaign) server() *Server { return c.w.servers[c.w.order[c.r.IntN(len(c.w.order))]] }

// op performs one random step of the session.
func (c *campaign) op() error {
	w, r, h := c.w, c.r, c.w.Host
	if c.proto && r.IntN(100) < 35 {
		return c.protoOp()
	}
	switch k := r.IntN(100); {
	case k < 30: // a call of a real tool
		s := c.server()
		return h.Call(c.id("c"), s.Tools[r.IntN(len(s.Tools))], fmt.Sprintf(`{"n":%d}`, r.IntN(1000)))
	case k < 34: // a call of a tool nobody offers
		return h.Call(c.id("c"), "nope", `{}`)
	case k < 44:
		return h.List(c.id("l"), c.server().Name)
	case k < 48:
		return h.Connect(c.id("k"), c.server().Name, r.IntN(3) == 0)
	case k < 50:
		return h.Status(c.id("s"))
	case k < 52: // the proxy tool's status, from the status board
		return h.MCP(c.id("m"), `{}`)
	case k < 60: // the host gives up on something in flight
		var cands []*hostOp
		for _, op := range h.active {
			if op.kind != "close" && op.cancellable() {
				cands = append(cands, op)
			}
		}
		if len(cands) == 0 {
			return nil
		}
		return h.Cancel(cands[r.IntN(len(cands))].id)
	case k < 66: // a server process crashes
		s := c.server()
		if len(s.liveConns()) > 0 {
			s.Crash("killed by the campaign")
		}
		return nil
	case k < 82:
		return w.Advance(c.pick(time.Duration(r.Int64N(int64(2*time.Second))), time.Duration(r.Int64N(int64(40*time.Second))),
			time.Duration(r.Int64N(int64(6*time.Minute)))).Truncate(time.Millisecond))
	case k < 94: // run a little: the next few activations or timers
		for i, n := 0, 1+r.IntN(30); i < n; i++ {
			w.quiet()
			if ran, err := w.step(true); err != nil || !ran {
				return err
			}
		}
		w.quiet()
		return nil
	default:
		return c.quiesce()
	}
}

// quiesce runs until nothing is in flight, then checks leases with a
// status query.
func (c *campaign) quiesce() error {
	w := c.w
	// Every deadline is at most minutes long, so two hours is plenty.
	if err := w.RunWithin(2*time.Hour, func() bool {
		return w.Host.Active() == 0 && w.Disp.Pending() == 0 && w.inv.outstanding() == 0 && (w.shared == nil || !w.shared.busy())
	}); err != nil {
		return w.unanswered(err)
	}
	if w.shared != nil {
		w.shared.quietCheck()
	}
	id := c.id("s")
	if err := w.Host.Status(id); err != nil {
		return err
	}
	return w.Host.Await(id)
}

// shutdown closes the runtime wherever the session stands, sometimes with
// calls arriving while it closes, and runs until Close has returned.
func (c *campaign) shutdown() error {
	w, h := c.w, c.w.Host
	if err := h.Close("close"); err != nil {
		return err
	}
	for i, n := 0, c.r.IntN(3); i < n; i++ {
		s := c.server()
		if err := h.Call(c.id("c"), s.Tools[0], `{"late":true}`); err != nil {
			return err
		}
	}
	if err := h.Await("close"); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	// Nothing may happen any more: one more call must fail at once.
	if err := h.Call(c.id("c"), c.server().Tools[0], `{"afterClose":true}`); err != nil {
		return err
	}
	if err := w.RunUntil(func() bool { return h.Active() == 0 }); err != nil {
		return fmt.Errorf("after close: %w", err)
	}
	return w.Err()
}
