package simtests

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// faultKind is one way a simulated server misbehaves.
type faultKind int

const (
	// Dial faults.
	faultDialFail       faultKind = iota + 1 // the dial fails (connect_failed or init_failed)
	faultDialSlow                            // the dial takes delay (past the startup deadline, say)
	faultCrashAtConnect                      // the dial succeeds, then the process exits at once
	// Request faults.
	faultHang        // the request is never answered
	faultRPCError    // a JSON-RPC error, with a numeric code or without one
	faultToolError   // a tools/call result with isError
	faultCrashBefore // the process exits before answering
	faultCrashAfter  // the process answers, then exits
	faultDelay       // the answer takes delay
)

var faultNames = map[faultKind]string{
	faultDialFail: "fail-dial", faultDialSlow: "slow-dial", faultCrashAtConnect: "crash-at-connect",
	faultHang: "hang", faultRPCError: "rpc-error", faultToolError: "tool-error",
	faultCrashBefore: "crash-before-reply", faultCrashAfter: "crash-after-reply", faultDelay: "delay",
}

func (k faultKind) String() string { return faultNames[k] }

func (k faultKind) isDial() bool { return k <= faultCrashAtConnect }

// fault is one armed fault: it applies to the next times matching dials or
// requests (times < 0: every one).
type fault struct {
	kind   faultKind
	method string // request faults: only this method ("" any)
	times  int
	delay  time.Duration
	err    *messages.Error // faultDialFail, faultRPCError
}

func (f *fault) String() string {
	s := f.kind.String()
	if f.method != "" {
		s += " method=" + f.method
	}
	if f.delay > 0 {
		s += " " + f.delay.String()
	}
	if f.err != nil {
		s += " " + describeErr(f.err)
		if len(f.err.RPCData) > 0 {
			s += " data=" + string(f.err.RPCData)
		}
	}
	if f.times < 0 {
		return s + " always"
	}
	return fmt.Sprintf("%s x%d", s, f.times)
}

// Arm adds a fault to the server's list.
func (s *Server) Arm(f *fault) { s.faults = append(s.faults, f) }

// Heal disarms every fault.
func (s *Server) Heal() { s.faults = nil }

// take returns the first armed fault matching, consuming one use of it.
func (s *Server) take(dial bool, method string) *fault {
	for i, f := range s.faults {
		if f.kind.isDial() != dial || (!dial && f.method != "" && f.method != method) {
			continue
		}
		if f.times > 0 {
			f.times--
			if f.times == 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
		}
		return f
	}
	return nil
}

// chaos draws faults and latencies from the seed: each server of a
// campaign has its own generator and rates.
type chaos struct {
	rng *rand.Rand
	// Per dial.
	dialFail, dialSlow, crashAtConnect float64
	// Per request.
	hang, rpcErr, toolErr, crashBefore, crashAfter float64
	// latency: a reply takes 0 with probability instant, else up to
	// maxLatency, and up to longLatency with probability long.
	instant, long           float64
	maxLatency, longLatency time.Duration
}

func (c *chaos) roll(p float64) bool { return p > 0 && c.rng.Float64() < p }

func (c *chaos) latency() time.Duration {
	switch {
	case c.roll(c.instant):
		return 0
	case c.roll(c.long):
		return time.Duration(c.rng.Int64N(int64(c.longLatency))).Truncate(time.Millisecond)
	}
	return time.Duration(c.rng.Int64N(int64(c.maxLatency))).Truncate(time.Millisecond)
}

// dialPlan is what a dial will do.
type dialPlan struct {
	fail  *messages.Error
	delay time.Duration
	crash bool   // succeed, then crash at once
	note  string // the fault applied, for the trace ("" when none)
}

// planDial decides the outcome of a dial: an armed fault first, else the
// seed's chaos, else success after DialLatency.
func (s *Server) planDial() dialPlan {
	p := dialPlan{delay: s.DialLatency}
	if f := s.take(true, ""); f != nil {
		p.note = f.kind.String()
		switch f.kind {
		case faultDialFail:
			p.fail = f.err
		case faultDialSlow:
			p.delay = f.delay
		case faultCrashAtConnect:
			p.crash = true
		}
		return p
	}
	if c := s.chaos; c != nil {
		p.delay = c.latency()
		switch {
		case c.roll(c.dialFail):
			p.note = "fail-dial (seed)"
			p.fail = messages.Errorf(messages.KindConnectFailed, s.Name, "connection refused (field command)")
			if c.rng.IntN(2) == 0 {
				p.fail = messages.Errorf(messages.KindInitFailed, s.Name, "handshake refused: unsupported protocol version")
			}
		case c.roll(c.dialSlow):
			p.delay = time.Duration(1+c.rng.IntN(60)) * time.Second
			p.note = "slow-dial " + p.delay.String() + " (seed)"
		case c.roll(c.crashAtConnect):
			p.crash, p.note = true, "crash-at-connect (seed)"
		}
	}
	return p
}

// reqPlan is what the server will do with one request.
type reqPlan struct {
	delay       time.Duration
	hang        bool
	err         *messages.Error
	toolError   bool
	crashBefore bool
	crashAfter  bool
	note        string // the fault applied, for the trace ("" when none)
}

// planRequest decides what happens to a request: an armed fault first,
// else the seed's chaos, else an answer after Latency.
func (s *Server) planRequest(method string) reqPlan {
	p := reqPlan{delay: s.Latency}
	if f := s.take(false, method); f != nil {
		p.note = f.kind.String()
		switch f.kind {
		case faultHang:
			p.hang = true
		case faultRPCError:
			p.err = f.err
		case faultToolError:
			p.toolError = method == "tools/call"
		case faultCrashBefore:
			p.crashBefore = true
		case faultCrashAfter:
			p.crashAfter = true
		case faultDelay:
			p.delay = f.delay
		}
		return p
	}
	if c := s.chaos; c != nil {
		p.delay = c.latency()
		switch {
		case c.roll(c.hang):
			p.hang, p.note = true, "hang (seed)"
		case c.roll(c.rpcErr):
			p.note = "rpc-error (seed)"
			p.err = &messages.Error{Kind: messages.KindRPC, Server: s.Name, Message: "internal server error (JSON-RPC error 0)"}
			if c.rng.IntN(2) == 0 {
				code := -32000 - c.rng.IntN(100)
				p.err = &messages.Error{Kind: messages.KindRPC, Server: s.Name, RPCCode: code, Message: fmt.Sprintf("simulated failure (JSON-RPC error %d)", code)}
			}
		case c.roll(c.toolErr):
			p.toolError = method == "tools/call"
			if p.toolError {
				p.note = "tool-error (seed)"
			}
		case c.roll(c.crashBefore):
			p.crashBefore, p.note = true, "crash-before-reply (seed)"
		case c.roll(c.crashAfter):
			p.crashAfter, p.note = true, "crash-after-reply (seed)"
		}
	}
	return p
}

// planStream decides how a stream behaves: as its params ask (every,
// n, end, code, data, other, late; see streamParams).
func (s *Server) planStream(p streamParams) streamPlan {
	every, _ := time.ParseDuration(p.Every)
	plan := streamPlan{every: every, n: p.N, end: p.End, code: p.Code, data: p.Data, other: p.Other, late: p.Late}
	if plan.end == "" {
		plan.end = "none"
	}
	return plan
}
