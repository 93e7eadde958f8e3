package simtests

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// phase says when a command may run.
type phase int

const (
	anytime phase = iota
	before        // before start: configuration
	after         // after start
)

// command is one scenario command.
type command struct {
	phase phase
	run   func(r *runner, args string) error
}

// commands are the scenario language; docs/simulation.md documents them.
var commands map[string]command

func init() {
	commands = map[string]command{
		"seed":   {before, cmdSeed},
		"server": {before, cmdServer},
		"start": {before, func(r *runner, _ string) error {
			r.started = true
			return r.w.Start()
		}},
		"call":       {after, func(r *runner, a string) error { return r.call(r.id("c"), a, true) }},
		"call-async": {after, func(r *runner, a string) error { id, rest := cut(a); return r.call(id, rest, false) }},
		"list": {after, func(r *runner, a string) error {
			return r.sync(r.id("l"), func(id string) error { return r.w.Host.List(id, a) })
		}},
		"list-async": {after, func(r *runner, a string) error { id, rest := cut(a); return r.async(r.w.Host.List(id, rest)) }},
		"mcp": {after, func(r *runner, a string) error {
			return r.sync(r.id("m"), func(id string) error { return r.w.Host.MCP(id, a) })
		}},
		"connect":          {after, func(r *runner, a string) error { return r.connect(r.id("k"), a, true) }},
		"connect-async":    {after, func(r *runner, a string) error { id, rest := cut(a); return r.connect(id, rest, false) }},
		"status":           {after, func(r *runner, _ string) error { return r.sync(r.id("s"), r.w.Host.Status) }},
		"await":            {after, func(r *runner, a string) error { return r.await(a) }},
		"cancel":           {after, cmdCancel},
		"advance":          {after, cmdAdvance},
		"settle":           {after, func(r *runner, _ string) error { r.held = false; return r.w.Settle() }},
		"hold":             {after, func(r *runner, _ string) error { r.held = true; return nil }},
		"step":             {after, cmdStep},
		"crash":            {after, cmdCrash},
		"crash-actor":      {after, cmdCrashActor},
		"fail-dial":        {anytime, armer(faultDialFail)},
		"slow-dial":        {anytime, armer(faultDialSlow)},
		"crash-at-connect": {anytime, armer(faultCrashAtConnect)},
		"hang":             {anytime, armer(faultHang)},
		"rpc-error":        {anytime, armer(faultRPCError)},
		"tool-error":       {anytime, armer(faultToolError)},
		"crash-on":         {anytime, armer(faultCrashBefore)},
		"delay":            {anytime, armer(faultDelay)},
		"heal":             {anytime, cmdHeal},
		"shutdown": {after, func(r *runner, _ string) error {
			r.closeStart = true
			if err := r.w.Host.Close("close"); err != nil {
				return err
			}
			return r.await("close")
		}},
		"shutdown-async": {after, func(r *runner, _ string) error {
			r.closeStart = true
			return r.async(r.w.Host.Close("close"))
		}},
	}
	addProtoCommands()
	addEventsCommands()
	addSharedCommands()
}

// cut splits off the first word.
func cut(s string) (string, string) {
	first, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	return first, strings.TrimSpace(rest)
}

// sync starts a host operation and runs until it has its answer.
func (r *runner) sync(id string, start func(id string) error) error {
	if err := start(id); err != nil {
		return err
	}
	return r.await(id)
}

// await runs until a host operation has its answer, then lets what is
// runnable at that instant run: every command ends with nothing queued.
func (r *runner) await(id string) error {
	r.held = false
	if err := r.w.Host.Await(id); err != nil {
		return err
	}
	return r.w.Settle()
}

// async settles after a host operation started (or failed to).
func (r *runner) async(err error) error {
	if err != nil {
		return err
	}
	return r.settle()
}

// settle lets what is runnable now run, unless the script holds it
// ("hold": the commands that follow start together, until "settle" or
// "await").
func (r *runner) settle() error {
	if r.held {
		return nil
	}
	return r.w.Settle()
}

// call runs "TOOL [JSON]".
func (r *runner) call(id, a string, wait bool) error {
	tool, args := cut(a)
	if tool == "" {
		return fmt.Errorf("usage: call TOOL [JSON] or call-async ID TOOL [JSON]")
	}
	if args == "" {
		args = "{}"
	}
	if err := r.w.Host.Call(id, tool, args); err != nil {
		return err
	}
	if wait {
		return r.await(id)
	}
	return r.settle()
}

// connect runs "NAME [fresh]".
func (r *runner) connect(id, a string, wait bool) error {
	name, rest := cut(a)
	if rest != "" && rest != "fresh" {
		return fmt.Errorf("usage: connect NAME [fresh]")
	}
	if err := r.w.Host.Connect(id, name, rest == "fresh"); err != nil {
		return err
	}
	if wait {
		return r.await(id)
	}
	return r.settle()
}

func cmdSeed(r *runner, a string) error {
	seed, err := strconv.ParseUint(a, 10, 64)
	if err != nil {
		return fmt.Errorf("usage: seed N")
	}
	if !r.fixedSeed {
		r.w.Seed, r.w.Rand = seed, clock.NewSeededRand(seed)
		r.w.Disp.Reseed(seed)
	}
	return nil
}

// options splits "k=v" words from positional ones.
func options(a string) (pos []string, opts map[string]string) {
	opts = map[string]string{}
	for _, f := range strings.Fields(a) {
		if k, v, ok := strings.Cut(f, "="); ok {
			opts[k] = v
		} else {
			pos = append(pos, f)
		}
	}
	return pos, opts
}

func cmdServer(r *runner, a string) error {
	pos, opts := options(a)
	if len(pos) == 0 {
		return fmt.Errorf("usage: server NAME [tools=a,b] [lifecycle=..] [idle=1m|never] [startup=D] [call-timeout=D] [catalog-timeout=D] [page=N] [latency=D] [dial-latency=D] [exit=D] [reap=D] [disabled]")
	}
	s := &Server{Name: pos[0], Tools: []string{"echo"}}
	for _, p := range pos[1:] {
		if p != "disabled" {
			return fmt.Errorf("unknown server flag %q", p)
		}
		s.Disabled = true
	}
	var err error
	dur := func(v string) time.Duration {
		d, e := time.ParseDuration(v)
		if e != nil && err == nil {
			err = e
		}
		return d
	}
	for k, v := range opts {
		switch k {
		case "tools":
			s.Tools = strings.Split(v, ",")
		case "lifecycle":
			s.Lifecycle = v
		case "idle":
			d := time.Duration(0)
			if v != "never" {
				d = dur(v)
			}
			s.Idle = &d
		case "startup":
			s.Startup = dur(v)
		case "call-timeout":
			s.Call = dur(v)
		case "catalog-timeout":
			s.Catalog = dur(v)
		case "latency":
			s.Latency = dur(v)
		case "dial-latency":
			s.DialLatency = dur(v)
		case "exit":
			s.ExitDelay = dur(v)
		case "reap":
			s.ReapDelay = dur(v)
		case "page":
			s.PageSize, err = strconv.Atoi(v)
		default:
			ok, e := serverEventsOption(s, k, v)
			if !ok {
				return fmt.Errorf("unknown server option %q", k)
			}
			if e != nil {
				return e
			}
		}
	}
	if err != nil {
		return err
	}
	r.w.AddServer(s)
	return nil
}

func (r *runner) server(name string) (*Server, error) {
	s := r.w.Server(name)
	if s == nil {
		return nil, fmt.Errorf("no server %q", name)
	}
	return s, nil
}

func cmdAdvance(r *runner, a string) error {
	d, err := time.ParseDuration(a)
	if err != nil {
		return fmt.Errorf("usage: advance DURATION")
	}
	return r.w.Advance(d)
}

// cmdStep runs "step [N]": N steps (default 1), each one activation (the
// oldest in FIFO order) or, when none is queued, the earliest timer; what
// they queue is left queued, so that the next command happens between two
// activations (a cancel while a reply is on its way, say).
func cmdStep(r *runner, a string) error {
	n := 1
	if a != "" {
		var err error
		if n, err = strconv.Atoi(a); err != nil || n < 1 {
			return fmt.Errorf("usage: step [N]")
		}
	}
	for range n {
		r.w.quiet()
		ran, err := r.w.step(true)
		if err != nil {
			return err
		}
		if !ran {
			return fmt.Errorf("step: nothing is queued and no timer is armed")
		}
	}
	r.w.quiet()
	return nil
}

func cmdCrash(r *runner, a string) error {
	s, err := r.server(a)
	if err != nil {
		return err
	}
	if s.Crash("killed by the scenario") == 0 {
		r.w.Tracef("%s has no live connection to crash", a)
	}
	return r.settle()
}

// cmdCrashActor arms a crash of the next ordinary message of an actor of
// kind KIND (the campaign's crash fault, crashes.go).
func cmdCrashActor(r *runner, a string) error {
	kind := messages.ActorKind(strings.TrimSpace(a))
	for _, k := range crashKinds {
		if k == kind {
			r.w.armCrash(kind)
			return nil
		}
	}
	return fmt.Errorf("usage: crash-actor server|session|stream|observer|events|subscription|batcher")
}

func cmdHeal(r *runner, a string) error {
	s, err := r.server(a)
	if err != nil {
		return err
	}
	s.Heal()
	r.w.Tracef("%s ! healed", a)
	return nil
}

// armer returns the handler arming a fault of kind: "NAME [D] [times=N|always]
// [method=M] [code=N|none] [kind=CODE] [after-reply]".
func armer(kind faultKind) func(*runner, string) error {
	return func(r *runner, a string) error {
		pos, opts := options(a)
		if len(pos) == 0 {
			return fmt.Errorf("usage: %s NAME [options]", kind)
		}
		s, err := r.server(pos[0])
		if err != nil {
			return err
		}
		f := &fault{kind: kind, times: 1, method: opts["method"]}
		for _, p := range pos[1:] {
			switch {
			case p == "after-reply" && kind == faultCrashBefore:
				f.kind = faultCrashAfter
			default:
				d, err := time.ParseDuration(p)
				if err != nil {
					return fmt.Errorf("unknown argument %q", p)
				}
				f.delay = d
			}
		}
		if t, ok := opts["times"]; ok {
			if t == "always" {
				f.times = -1
			} else if f.times, err = strconv.Atoi(t); err != nil || f.times < 1 {
				return fmt.Errorf("times=%s: want a positive count or always", t)
			}
		}
		switch kind {
		case faultDialFail:
			k := messages.KindConnectFailed
			msg := "connection refused (field command)"
			switch opts["kind"] {
			case "", "connect_failed":
			case "init_failed":
				k, msg = messages.KindInitFailed, "handshake refused: unsupported protocol version"
			case "auth_required":
				k, msg = messages.KindAuthRequired, "server requires authorization (HTTP 401)"
			default:
				return fmt.Errorf("kind=%s: want connect_failed, init_failed or auth_required", opts["kind"])
			}
			f.err = messages.Errorf(k, s.Name, "%s", msg)
		case faultRPCError:
			f.err = &messages.Error{Kind: messages.KindRPC, Server: s.Name, Message: "internal error (JSON-RPC error 0)"}
			if c := opts["code"]; c != "" && c != "none" {
				code, err := strconv.Atoi(c)
				if err != nil {
					return fmt.Errorf("code=%s: want a number or none", c)
				}
				f.err.RPCCode, f.err.Message = code, fmt.Sprintf("simulated failure (JSON-RPC error %d)", code)
			}
			if d := opts["data"]; d != "" {
				if !json.Valid([]byte(d)) {
					return fmt.Errorf("data=%s: want JSON", d)
				}
				f.err.RPCData = json.RawMessage(d)
			}
		case faultDialSlow, faultDelay:
			if f.delay <= 0 {
				return fmt.Errorf("%s needs a duration", kind)
			}
		}
		s.Arm(f)
		r.w.Tracef("%s ! armed %s", s.Name, f)
		return nil
	}
}
