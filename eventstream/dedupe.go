package eventstream

import "hash/maphash"

// Window is the dedupe window of one logical subscription: the ids of the
// last Size distinct events, in first-seen order. It outlives the streams
// of its subscription, so a replay after a reconnect is deduplicated
// against what the earlier streams delivered.
//
// It keeps 64-bit hashes of the ids, not the ids: a ring of Size hashes
// (oldest overwritten first) and a set of the same hashes. Full, at 10,000
// ids, that is about 0.36 MiB whatever the ids' length (docs/events.md has
// the measurement), against about 1.5 MiB for a string-keyed LRU.
//
// Collision bound: the hash is hash/maphash with a seed drawn per window,
// so ids cannot be crafted to collide. A new id is wrongly taken for a
// duplicate only if its hash equals one of the at most n hashes in the
// window: probability at most n/2^64, 5.5e-16 per event for n = 10,000.
// Over N events the chance of any wrong suppression is at most
// N·n/2^64: one in a million after 1.8e9 events, about 1.7% after a year
// at one million events a second. A collision never delivers a duplicate;
// it can only suppress one new event.
type Window struct {
	seed maphash.Seed
	size int
	ring []uint64 // grows to size, then wraps; ring[next] is the oldest
	next int
	set  map[uint64]struct{}
}

// NewWindow returns an empty window of size ids (at least 1). Memory grows
// with use: an empty window holds no ring and no set yet.
func NewWindow(size int) *Window {
	return &Window{seed: maphash.MakeSeed(), size: max(size, 1)}
}

// Seen records id and reports whether it was already in the window. A
// duplicate does not move: the window is first-seen order, and the oldest
// id is forgotten when a new one arrives at a full window.
func (w *Window) Seen(id string) bool {
	h := maphash.String(w.seed, id)
	if _, ok := w.set[h]; ok {
		return true
	}
	if w.set == nil {
		w.set = make(map[uint64]struct{})
	}
	if len(w.ring) < w.size {
		if len(w.ring) == cap(w.ring) {
			// Grow by doubling, but never past size: a full ring is
			// exactly size hashes.
			grown := make([]uint64, len(w.ring), min(max(2*cap(w.ring), 64), w.size))
			copy(grown, w.ring)
			w.ring = grown
		}
		w.ring = append(w.ring, h)
	} else {
		delete(w.set, w.ring[w.next])
		w.ring[w.next] = h
		w.next = (w.next + 1) % w.size
	}
	w.set[h] = struct{}{}
	return false
}

// Len returns how many ids the window holds.
func (w *Window) Len() int { return len(w.ring) }
