package simtests

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The scenario commands of MCP events (docs/simulation.md).
func addEventsCommands() {
	for name, c := range map[string]command{
		"subscribe":       {after, func(r *runner, a string) error { return r.subscribe(a, true) }},
		"subscribe-async": {after, func(r *runner, a string) error { return r.subscribe(a, false) }},
		"unsubscribe": {after, func(r *runner, a string) error {
			return r.sync(r.id("u"), func(id string) error { return r.w.Host.Unsubscribe(id, a) })
		}},
		"events-list": {after, func(r *runner, _ string) error {
			return r.sync(r.id("el"), func(id string) error { return r.w.Host.EventsList(id, false) })
		}},
		"ev-check": {after, func(r *runner, _ string) error {
			return r.sync(r.id("el"), func(id string) error { return r.w.Host.EventsList(id, true) })
		}},
		"catalog": {after, func(r *runner, a string) error {
			return r.sync(r.id("ec"), func(id string) error { return r.w.Host.Catalog(id, a) })
		}},
		"emit": {after, cmdEmit},
		"ev-heartbeat": {after, evFault(func(s *Server, name string, _ []string, o map[string]string) (int, error) {
			switch o["cursor"] {
			case "":
				return s.evHeartbeat(name), nil
			case "null", "absent":
				return s.evHeartbeatWithout(name, o["cursor"]), nil
			}
			return 0, fmt.Errorf("ev-heartbeat: cursor=%s: want null or absent", o["cursor"])
		})},
		"ev-dup": {after, evFault(func(s *Server, name string, _ []string, o map[string]string) (int, error) {
			n, err := countOpt(o, "n", 1)
			return s.evDup(name, n), err
		})},
		"ev-gap": {after, evFault(func(s *Server, name string, _ []string, o map[string]string) (int, error) {
			n, err := countOpt(o, "n", 1)
			return s.evGap(name, n), err
		})},
		"ev-error": {after, evFault(func(s *Server, name string, rest []string, _ map[string]string) (int, error) {
			return s.evError(name, strings.Join(rest, " ")), nil
		})},
		"ev-terminate": {after, evFault(func(s *Server, name string, _ []string, _ map[string]string) (int, error) {
			return s.evTerminate(name), nil
		})},
		"ev-flap": {after, func(r *runner, a string) error {
			pos, opts := options(a)
			if len(pos) != 1 {
				return fmt.Errorf("usage: ev-flap SERVER [times=N] [gap=true]")
			}
			s, err := r.server(pos[0])
			if err != nil {
				return err
			}
			s.evFlapGap = opts["gap"] == "true"
			s.evFlap, err = countOpt(opts, "times", 1)
			return err
		}},
		"ev-late": {after, evFault(func(s *Server, name string, _ []string, _ map[string]string) (int, error) { return s.evLate(name), nil })},
		"ev-stall": {after, evFault(func(s *Server, name string, _ []string, _ map[string]string) (int, error) {
			return s.evStall(name), nil
		})},
		"ev-bad": {after, evFault(func(s *Server, name string, rest []string, _ map[string]string) (int, error) {
			if len(rest) != 1 {
				return 0, fmt.Errorf("usage: ev-bad SERVER NAME KIND (one of %s)", strings.Join(badFrames, ", "))
			}
			return s.evBad(name, rest[0])
		})},
		"ev-end": {after, evFault(func(s *Server, name string, rest []string, o map[string]string) (int, error) {
			if len(rest) != 1 {
				return 0, fmt.Errorf("usage: ev-end SERVER NAME result|error [code=N]")
			}
			code, err := strconv.Atoi(o["code"])
			if o["code"] == "" {
				code, err = 0, nil
			}
			if err != nil {
				return 0, fmt.Errorf("code=%s: want a number", o["code"])
			}
			return s.evEnd(name, rest[0], code)
		})},
		"ev-catalog": {anytime, func(r *runner, a string) error {
			server, spec := cut(a)
			s, err := r.server(server)
			if err != nil {
				return err
			}
			s.evCatalog(spec)
			if r.started {
				return r.w.Settle()
			}
			return nil
		}},
	} {
		commands[name] = c
	}
}

// subscribe runs "ID SERVER NAME [JSON] [cursor=C] [max-age-ms=N]".
func (r *runner) subscribe(a string, wait bool) error {
	rest, opts := trailing(a, "cursor", "max-age-ms")
	id, rest := cut(rest)
	server, rest := cut(rest)
	name, args := cut(rest)
	if name == "" {
		return fmt.Errorf("usage: subscribe ID SERVER NAME [JSON] [cursor=C] [max-age-ms=N]")
	}
	if args != "" && !json.Valid([]byte(args)) {
		return fmt.Errorf("subscribe %s: arguments must be JSON", id)
	}
	maxAge := -1
	if v, ok := opts["max-age-ms"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("max-age-ms=%s: want a number", v)
		}
		maxAge = n
	}
	if err := r.w.Host.Subscribe(id, server, name, args, opts["cursor"], maxAge); err != nil {
		return err
	}
	if wait {
		return r.await(id)
	}
	return r.w.Settle()
}

// cmdEmit runs "SERVER NAME [times=N] [size=BYTES]".
func cmdEmit(r *runner, a string) error {
	pos, opts := options(a)
	if len(pos) != 2 {
		return fmt.Errorf("usage: emit SERVER NAME [times=N] [size=BYTES]")
	}
	s, err := r.server(pos[0])
	if err != nil {
		return err
	}
	n, err := countOpt(opts, "times", 1)
	if err != nil {
		return err
	}
	size, err := countOpt(opts, "size", 0)
	if err != nil {
		return err
	}
	if err := s.emit(pos[1], n, size); err != nil {
		return err
	}
	return r.w.Settle()
}

// evFault runs "SERVER NAME [ARGS...] [k=v...]" with f, tracing when no
// stream of that event was there to receive it.
func evFault(f func(s *Server, name string, rest []string, opts map[string]string) (int, error)) func(*runner, string) error {
	return func(r *runner, a string) error {
		pos, opts := options(a)
		if len(pos) < 2 {
			return fmt.Errorf("usage: ev-... SERVER NAME ...")
		}
		s, err := r.server(pos[0])
		if err != nil {
			return err
		}
		n, err := f(s, pos[1], pos[2:], opts)
		if err != nil {
			return err
		}
		if n == 0 {
			r.w.Tracef("%s has no open stream of %s", pos[0], pos[1])
		}
		return r.w.Settle()
	}
}

// countOpt reads a count option with a default.
func countOpt(opts map[string]string, k string, def int) (int, error) {
	if _, ok := opts[k]; !ok {
		return def, nil
	}
	return number(opts, k)
}

// serverEventsOption applies an events option of the server command.
func serverEventsOption(s *Server, k, v string) (bool, error) {
	switch k {
	case "events":
		for _, spec := range strings.Split(v, ",") {
			s.addTopic(spec)
		}
	case "retain":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return true, fmt.Errorf("retain=%s: want a count", v)
		}
		s.Retain = n
	case "heartbeat":
		if v == "none" {
			s.Heartbeat = -1
			return true, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return true, fmt.Errorf("heartbeat=%s: want a duration or none", v)
		}
		s.Heartbeat = d
	default:
		return false, nil
	}
	return true, nil
}
