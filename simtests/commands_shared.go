package simtests

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// The scenario commands of the shared runtime (docs/simulation.md, "The
// shared runtime"): a member over the runtime, sessions attached through
// simulated hops, and the hops' faults. A session's commands send a
// message up its hop and settle; answers cross the hop as time moves
// (advance) when it has a latency.
func addSharedCommands() {
	for name, c := range map[string]command{
		"member": {after, func(r *runner, a string) error {
			_, opts := trailing(a, "timeout")
			timeout, err := durOpt(opts, "timeout", 5*time.Second)
			if err != nil {
				return err
			}
			r.w.shared = newShared(r.w, timeout)
			r.w.Tracef("member serves (session timeout %s)", timeout)
			return nil
		}},
		"attach": {after, func(r *runner, a string) error {
			name, opts := trailing(a, "latency")
			lat, err := durOpt(opts, "latency", 0)
			if err != nil {
				return err
			}
			sw, err := r.member()
			if err != nil {
				return err
			}
			if sw.sessions[name] != nil {
				return fmt.Errorf("attach: %s exists already", name)
			}
			sw.attach(name, lat)
			return r.settle()
		}},
		"s-call": {after, sessionCmd(func(r *runner, ss *simSession, a string) error {
			server, rest := cut(a)
			tool, args := cut(rest)
			if tool == "" {
				return fmt.Errorf("usage: s-call SESSION SERVER TOOL [JSON]")
			}
			if args == "" {
				args = "{}"
			}
			ss.request(&sharedReq{kind: "call", server: server, tool: tool, args: args})
			return nil
		})},
		"s-subscribe": {after, sessionCmd(func(r *runner, ss *simSession, a string) error {
			server, rest := cut(a)
			name, args := cut(rest)
			if name == "" || (args != "" && !json.Valid([]byte(args))) {
				return fmt.Errorf("usage: s-subscribe SESSION SERVER EVENT [JSON]")
			}
			ss.request(&sharedReq{kind: "subscribe", server: server, tool: name, args: args})
			return nil
		})},
		"s-unsubscribe": {after, sessionCmd(func(r *runner, ss *simSession, a string) error {
			sub := a
			if op := r.w.Host.Op(a); op != nil && len(op.res.snaps) == 1 { // SESSION.ID of a subscribe
				sub = op.res.snaps[0].ID
			}
			ss.request(&sharedReq{kind: "unsubscribe", sub: sub})
			return nil
		})},
		"s-list": {after, sessionCmd(func(r *runner, ss *simSession, _ string) error {
			ss.request(&sharedReq{kind: "list"})
			return nil
		})},
		"s-cancel": {after, sessionCmd(func(r *runner, ss *simSession, a string) error {
			id, err := strconv.ParseUint(a, 10, 64)
			if err != nil {
				return fmt.Errorf("usage: s-cancel SESSION ID")
			}
			ss.cancel(id)
			return nil
		})},
		"detach": {after, sessionCmd(func(r *runner, ss *simSession, _ string) error { ss.detach(); return nil })},
		"kill": {after, sessionCmd(func(r *runner, ss *simSession, _ string) error {
			r.w.shared.kill(ss.name)
			return nil
		})},
		"partition": {after, sessionCmd(func(r *runner, ss *simSession, a string) error {
			_, opts := trailing(a, "for")
			d, err := durOpt(opts, "for", 0)
			if err != nil {
				return err
			}
			r.w.shared.partition(ss.name, d)
			return nil
		})},
		"ask": {after, func(r *runner, a string) error {
			sw, err := r.member()
			if err != nil {
				return err
			}
			sw.ask(a)
			return r.settle()
		}},
		"withdraw": {after, func(r *runner, a string) error {
			sw, err := r.member()
			if err != nil {
				return err
			}
			id, err := strconv.ParseUint(a, 10, 64)
			if err != nil {
				return fmt.Errorf("usage: withdraw QUESTION")
			}
			sw.withdraw(id)
			return r.settle()
		}},
		"outcomes": {after, func(r *runner, a string) error {
			sw, err := r.member()
			if err != nil {
				return err
			}
			switch a {
			case "hold":
				sw.holding = true
			case "release":
				sw.holding = false
				sw.inbox = append(sw.inbox, sw.held...)
				sw.held = nil
			default:
				return fmt.Errorf("usage: outcomes hold|release")
			}
			r.w.Tracef("member: outcomes %s", a)
			return r.settle()
		}},
		"unpartition": {after, sessionCmd(func(r *runner, ss *simSession, _ string) error { ss.hop.heal(); return nil })},
	} {
		commands[name] = c
	}
}

// member returns the scenario's member, or an error before "member".
func (r *runner) member() (*sharedWorld, error) {
	if r.w.shared == nil {
		return nil, fmt.Errorf("no member yet: use \"member\" first")
	}
	return r.w.shared, nil
}

// sessionCmd runs "SESSION ARGS" for an attached session, then settles.
func sessionCmd(f func(r *runner, ss *simSession, args string) error) func(*runner, string) error {
	return func(r *runner, a string) error {
		sw, err := r.member()
		if err != nil {
			return err
		}
		name, rest := cut(a)
		ss := sw.sessions[name]
		if ss == nil {
			return fmt.Errorf("no session %q", name)
		}
		if err := f(r, ss, rest); err != nil {
			return err
		}
		return r.settle()
	}
}

// durOpt reads a duration option (def when absent).
func durOpt(opts map[string]string, k string, def time.Duration) (time.Duration, error) {
	v, ok := opts[k]
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%s: want a duration", k, v)
	}
	return d, nil
}
