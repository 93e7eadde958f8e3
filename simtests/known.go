package simtests

import (
	"fmt"
	"strings"
)

// KnownIssue is a runtime bug the simulator has found and reported but
// that is not fixed yet. A seed that hits one (and nothing else) does not
// fail the default campaign; TestSim lists how many seeds hit it and the
// first one, and -strict makes it fail. Remove an entry when its bug is
// fixed: then every seed that hit it must pass.
type KnownIssue struct {
	ID, What string
}

func (k *KnownIssue) Error() string { return "known issue " + k.ID + ": " + k.What }

// No known issue is open. K1 (a catalog refresh superseded by one on a
// newer connection never answered its waiters) was fixed in
// actors/server_catalog.go: the superseded run's waiters join the new run,
// and a listing whose connection ended moves, as a whole, to a new one.

// unanswered reports host operations that got no answer within a bound,
// or else requests the servers still hold for nobody, as a broken
// invariant naming them.
func (w *World) unanswered(cause error) error {
	var ids []string
	for _, op := range w.Host.active {
		ids = append(ids, op.id+" ("+op.what+")")
	}
	if len(ids) > 0 {
		w.violate("every host operation gets an answer: %s got none (%v)", strings.Join(ids, ", "), cause)
		return w.Err()
	}
	// Nobody waits, yet requests stay unanswered: the runtime left them
	// (a stream that ended without cancelling its request, say).
	var reqs []string
	for _, name := range w.order {
		for _, l := range w.servers[name].links {
			if l.conn == nil {
				continue
			}
			for _, id := range sortedIDs(l.conn.pending) {
				if r := l.conn.pending[id]; !w.inv.openStream(r) {
					reqs = append(reqs, fmt.Sprintf("%s %d %s", l.label, id, describeOp(r.op)))
				}
			}
		}
	}
	if len(reqs) == 0 {
		return cause
	}
	w.violate("requests left unanswered with nobody waiting for them: %s (%v)", strings.Join(reqs, ", "), cause)
	return w.Err()
}
