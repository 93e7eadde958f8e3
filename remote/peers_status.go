package remote

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// Servers, ServerStatuses and Status through a member of a cluster: this
// member's servers and every live member's. A server several members
// configure is listed once: this member's while it offers it (offers.go);
// else the status of the first member, in the membership's order, that
// offers it and can be reached, naming that member (Member); else, when
// it runs nowhere, as failed with every member's reason.

// merged answers Servers and ServerStatuses.
func (s *Server) merged(ctx context.Context, m *requestMsg) (json.RawMessage, error) {
	if m.Op == opServers {
		names := s.rt.Servers()
		for _, a := range s.askPeers(ctx, m.Op, "", nil) {
			var theirs []string
			if a.err == nil && json.Unmarshal(a.b, &theirs) == nil {
				for _, n := range theirs {
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
		}
		return json.Marshal(names)
	}
	all := s.rt.ServerStatuses()
	by := map[string][]messages.ServerStatus{} // the other members' statuses, by server
	var others []string                        // the servers this member does not configure
	for _, a := range s.askPeers(ctx, m.Op, "", nil) {
		var theirs []messages.ServerStatus
		if a.err == nil && json.Unmarshal(a.b, &theirs) == nil {
			for _, st := range theirs {
				st.Member = a.p.addr
				by[st.Name] = append(by[st.Name], st)
				if !slices.ContainsFunc(all, func(o messages.ServerStatus) bool { return o.Name == st.Name }) && !slices.Contains(others, st.Name) {
					others = append(others, st.Name)
				}
			}
		}
	}
	// offering is the status of the first member offering name.
	offering := func(name string) (messages.ServerStatus, bool) {
		for _, mi := range s.member.running(name) {
			if i := slices.IndexFunc(by[name], func(o messages.ServerStatus) bool { return o.Member == mi.Addr }); i >= 0 {
				return by[name][i], true
			}
		}
		return messages.ServerStatus{}, false
	}
	for i, st := range all {
		if !s.offers.offered(st.Name) {
			if o, ok := offering(st.Name); ok {
				all[i] = o
			}
		}
	}
	for _, name := range others {
		o, ok := offering(name)
		if !ok {
			o = by[name][0]
		}
		all = append(all, o)
	}
	return json.Marshal(all)
}

// row is one member's status of one server.
type row struct {
	st   mcprt.ServerStatus
	down bool // the member cannot be reached, or left: st says so
}

var _ mcprt.PeerStatus = peersOf{}

// Status is the merged status for the `mcp` tool's status mode ({}), as
// a session's Status has it; ok is false for a request another member
// forwarded, or a member alone (its own status stands).
func (p peersOf) Status(ctx context.Context) (mcprt.StatusSnapshot, bool) {
	s := p.s
	if isForwarded(ctx) || s.member == nil || s.member.alone() {
		return mcprt.StatusSnapshot{}, false
	}
	return s.mergedStatusOf(ctx), true
}

// mergedStatusOf is this member's status with every live member's: a
// reachable member's servers as it reports them, the servers of one that
// cannot be reached or that left as failed, naming it; each server once
// (see above). The totals are counted again over the servers listed.
func (s *Server) mergedStatusOf(ctx context.Context) mcprt.StatusSnapshot {
	st := s.rt.Status()
	by := map[string][]row{} // the other members' rows, by server
	var others []string      // the servers this member does not configure
	add := func(r row) {
		by[r.st.Name] = append(by[r.st.Name], r)
		if !slices.ContainsFunc(st.Servers, func(o mcprt.ServerStatus) bool { return o.Name == r.st.Name }) && !slices.Contains(others, r.st.Name) {
			others = append(others, r.st.Name)
		}
	}
	for _, a := range s.askPeers(ctx, opStatus, "", nil) {
		p := a.p
		var theirs mcprt.StatusSnapshot
		if err := a.err; err != nil || json.Unmarshal(a.b, &theirs) != nil {
			if err == nil {
				err = fmt.Errorf("its status is malformed")
			}
			p.mu.Lock()
			names := append([]string(nil), p.servers...)
			p.mu.Unlock()
			for _, name := range names {
				add(row{st: mcprt.ServerStatus{Name: name, Member: p.addr, Status: "failed",
					LastError: "the member at " + p.addr + " that runs it cannot be reached now: " + err.Error()}, down: true})
			}
			continue
		}
		for _, ss := range theirs.Servers {
			ss.Member = p.addr
			add(row{st: ss})
		}
		st.Skipped = append(st.Skipped, theirs.Skipped...)
	}
	for _, m := range s.member.gone("") {
		for _, name := range m.Servers {
			add(row{st: mcprt.ServerStatus{Name: name, Member: m.Addr, Status: "failed",
				LastError: "the member at " + m.Addr + " that runs it cannot be reached (it left the cluster)"}, down: true})
		}
	}
	var detailed []messages.ServerStatus // this member's, for the reasons of the ones it withdrew
	reason := func(name string) string {
		if detailed == nil {
			detailed = s.rt.ServerStatuses()
		}
		for _, d := range detailed {
			if d.Name == name && d.LastError != nil {
				return d.LastError.Message
			}
		}
		return ""
	}
	pick := func(name string, own *mcprt.ServerStatus) mcprt.ServerStatus {
		for _, mi := range s.member.running(name) {
			for _, r := range by[name] {
				if r.st.Member == mi.Addr && !r.down {
					return r.st
				}
			}
		}
		// It runs nowhere: failed, with every member's reason.
		var out mcprt.ServerStatus
		var reasons []string
		if own != nil {
			out = *own
			if why := cmp.Or(out.LastError, reason(name)); why != "" {
				reasons = append(reasons, why)
			}
		} else {
			out = by[name][0].st
		}
		for _, r := range by[name] {
			switch {
			case r.st.LastError == "":
			case r.down:
				reasons = append(reasons, r.st.LastError)
			default:
				reasons = append(reasons, "on the member at "+r.st.Member+": "+r.st.LastError)
			}
		}
		if out.Status == "cached" || out.Status == "not-connected" {
			out.Status = "failed"
		}
		out.LastError = strings.Join(reasons, "; ")
		return out
	}
	for i, ss := range st.Servers {
		if !s.offers.offered(ss.Name) {
			st.Servers[i] = pick(ss.Name, &ss)
		}
	}
	for _, name := range others {
		st.Servers = append(st.Servers, pick(name, nil))
	}
	st.TotalTools, st.TotalResources, st.ConnectedCount, st.DisabledCount = 0, 0, 0, 0
	for _, ss := range st.Servers {
		if ss.Disabled {
			st.DisabledCount++
			continue
		}
		st.TotalTools += ss.ToolCount
		if ss.ResourceCount != nil {
			st.TotalResources += *ss.ResourceCount
		}
		if ss.Status == "connected" {
			st.ConnectedCount++
		}
	}
	return st
}
