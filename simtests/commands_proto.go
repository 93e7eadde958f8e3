package simtests

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The scenario commands of the protocol-extension API (docs/simulation.md).
func addProtoCommands() {
	for name, c := range map[string]command{
		"register":      {after, func(r *runner, _ string) error { return r.async(r.w.Host.Register()) }},
		"session":       {after, func(r *runner, a string) error { return r.session(a, true) }},
		"session-async": {after, func(r *runner, a string) error { return r.session(a, false) }},
		"request":       {after, func(r *runner, a string) error { return r.request(a, true) }},
		"request-async": {after, func(r *runner, a string) error { return r.request(a, false) }},
		"stream":        {after, cmdStream},
		"watch":         {after, cmdWatch},
		"close-session": {after, func(r *runner, a string) error {
			return r.sync(r.id("cs"), func(id string) error { return r.w.Host.CloseSession(id, a) })
		}},
		"dispose":    {after, func(r *runner, _ string) error { return r.sync(r.id("d"), r.w.Host.Dispose) }},
		"frame":      {after, cmdFrame},
		"end-stream": {after, cmdEndStream},
		"notify":     {after, cmdNotify},
	} {
		commands[name] = c
	}
}

// cmdCancel cancels a stream or observer, or a host operation's context.
func cmdCancel(r *runner, a string) error {
	if r.w.Host.ps != nil && r.w.Host.ps.byStream[a] != nil {
		return r.async(r.w.Host.CancelStream(a))
	}
	return r.async(r.w.Host.Cancel(a))
}

// session runs "ID SERVER".
func (r *runner) session(a string, wait bool) error {
	id, server := cut(a)
	if id == "" || server == "" {
		return fmt.Errorf("usage: session ID SERVER")
	}
	if err := r.w.Host.Session(id, server); err != nil {
		return err
	}
	if wait {
		return r.await(id)
	}
	return r.w.Settle()
}

// request runs "ID SESSION METHOD [JSON]".
func (r *runner) request(a string, wait bool) error {
	id, rest := cut(a)
	session, rest := cut(rest)
	method, params := cut(rest)
	if method == "" {
		return fmt.Errorf("usage: request ID SESSION METHOD [JSON]")
	}
	if params == "" {
		params = "{}"
	}
	if err := r.w.Host.Request(id, session, method, params); err != nil {
		return err
	}
	if wait {
		return r.await(id)
	}
	return r.w.Settle()
}

// trailing splits "k=v" words (with the given keys) off the end of a.
func trailing(a string, keys ...string) (string, map[string]string) {
	opts := map[string]string{}
	words := strings.Fields(a)
	for len(words) > 0 {
		k, v, ok := strings.Cut(words[len(words)-1], "=")
		known := false
		for _, x := range keys {
			known = known || x == k
		}
		if !ok || !known {
			break
		}
		opts[k] = v
		words = words[:len(words)-1]
	}
	return strings.Join(words, " "), opts
}

// number reads an optional count option.
func number(opts map[string]string, k string) (int, error) {
	v, ok := opts[k]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%s: want a count", k, v)
	}
	return n, nil
}

// cmdStream runs "ID SESSION [JSON] [fail-at=K] [panic-at=K] [cancel=now]";
// cancel=now cancels the stream at once, before its actor has run.
func cmdStream(r *runner, a string) error {
	id, rest := cut(a)
	session, rest := cut(rest)
	params, opts := trailing(rest, "fail-at", "panic-at", "cancel", "shutdown")
	if session == "" {
		return fmt.Errorf("usage: stream ID SESSION [JSON] [fail-at=K] [panic-at=K] [cancel=now] [shutdown=now]")
	}
	if params == "" {
		params = "{}"
	}
	failAt, err := number(opts, "fail-at")
	if err != nil {
		return err
	}
	panicAt, err := number(opts, "panic-at")
	if err != nil {
		return err
	}
	if err := r.w.Host.OpenStream(id, session, params, failAt, panicAt); err != nil {
		return err
	}
	if opts["cancel"] == "now" {
		if err := r.w.Host.CancelStream(id); err != nil {
			return err
		}
	}
	if opts["shutdown"] == "now" {
		// Close starts before anything runs: the open is still on its way.
		r.closeStart = true
		if err := r.w.Host.Close("close"); err != nil {
			return err
		}
		return r.await("close")
	}
	return r.w.Settle()
}

// cmdWatch runs "ID SESSION METHOD[,METHOD] [fail-at=K]".
func cmdWatch(r *runner, a string) error {
	rest, opts := trailing(a, "fail-at")
	id, rest := cut(rest)
	session, methods := cut(rest)
	if methods == "" {
		return fmt.Errorf("usage: watch ID SESSION METHOD[,METHOD] [fail-at=K]")
	}
	failAt, err := number(opts, "fail-at")
	if err != nil {
		return err
	}
	return r.async(r.w.Host.Watch(id, session, strings.Split(methods, ","), failAt))
}

// timesOpt reads "times=N" (default 1).
func timesOpt(opts map[string]string) (int, error) {
	if _, ok := opts["times"]; !ok {
		return 1, nil
	}
	return number(opts, "times")
}

// liveStream finds the stream the host calls host on server's newest
// connection that has it.
func (r *runner) liveStream(server, host string) (*simStream, error) {
	s, err := r.server(server)
	if err != nil {
		return nil, err
	}
	for i := len(s.links) - 1; i >= 0; i-- {
		if c := s.links[i].conn; c != nil {
			if st := c.streamFor(host); st != nil {
				return st, nil
			}
		}
	}
	return nil, fmt.Errorf("%s never received stream %s", server, host)
}

// cmdFrame runs "NAME STREAM [method=M] [sub=none|foreign|ID] [times=N]":
// the server sends frames of the stream now, whether or not it is over.
func cmdFrame(r *runner, a string) error {
	pos, opts := options(a)
	if len(pos) != 2 {
		return fmt.Errorf("usage: frame NAME STREAM [method=M] [sub=none|foreign|ID] [times=N]")
	}
	st, err := r.liveStream(pos[0], pos[1])
	if err != nil {
		return err
	}
	if st.c.state != connLive {
		return fmt.Errorf("frame: the connection of %s is gone", pos[1])
	}
	method := opts["method"]
	if method == "" {
		method = methodItem
	}
	sub := opts["sub"]
	if sub == "foreign" {
		sub = "other-client-7"
	}
	times, err := timesOpt(opts)
	if err != nil {
		return err
	}
	for i := 0; i < times; i++ {
		st.send(method, sub)
	}
	return r.w.Settle()
}

// cmdEndStream runs "NAME STREAM result|cancelled|error [code=N] [data=JSON]".
func cmdEndStream(r *runner, a string) error {
	pos, opts := options(a)
	if len(pos) != 3 {
		return fmt.Errorf("usage: end-stream NAME STREAM result|cancelled|error [code=N] [data=JSON]")
	}
	st, err := r.liveStream(pos[0], pos[1])
	if err != nil {
		return err
	}
	st.plan.end, st.plan.late = pos[2], 0
	if c := opts["code"]; c != "" {
		if st.plan.code, err = strconv.Atoi(c); err != nil {
			return fmt.Errorf("code=%s: want a number", c)
		}
	}
	if d := opts["data"]; d != "" {
		if !json.Valid([]byte(d)) {
			return fmt.Errorf("data=%s: want JSON", d)
		}
		st.plan.data = json.RawMessage(d)
	}
	if r := st.c.pending[st.op.ID]; r == nil || r.stream != st {
		return fmt.Errorf("end-stream: %s is over already at %s", pos[1], pos[0])
	}
	st.finish()
	return r.w.Settle()
}

// cmdNotify runs "NAME METHOD [times=N]": the server sends a notification
// outside any stream on each of its live connections.
func cmdNotify(r *runner, a string) error {
	pos, opts := options(a)
	if len(pos) != 2 {
		return fmt.Errorf("usage: notify NAME METHOD [times=N]")
	}
	s, err := r.server(pos[0])
	if err != nil {
		return err
	}
	times, err := timesOpt(opts)
	if err != nil {
		return err
	}
	for i := 0; i < times; i++ {
		s.notify(pos[1])
	}
	return r.w.Settle()
}
