package eventsrv

import (
	"encoding/json"
	"time"
)

// Entry is one event occurrence as a Server retains it.
type Entry struct {
	// Seq numbers the occurrences of one event type from 1, without gaps.
	Seq uint64 `json:"seq"`
	// ID is the occurrence's eventId.
	ID   string          `json:"id"`
	Time time.Time       `json:"time"`
	Data json.RawMessage `json:"data"`

	// tail is the occurrence's notifications/events/event params after the
	// _meta member, encoded once for every stream: `"eventId":…}`. Nil
	// until the server has encoded it.
	tail []byte
}

// eventLog holds one event type's retained occurrences, oldest first, and
// remembers where retention cut it. Entry i has sequence number
// entries[0].Seq+i. It is not safe for concurrent use; its topic guards it.
type eventLog struct {
	maxEvents int
	maxAge    time.Duration

	entries []Entry
	// head is the sequence number of the newest occurrence (0: none yet).
	head uint64
	// floor is the sequence number of the newest occurrence retention has
	// dropped (0: none), floorTime its time.
	floor     uint64
	floorTime time.Time
}

// add appends e (whose Seq must be head+1) and drops what no longer fits.
func (l *eventLog) add(e Entry, now time.Time) {
	l.entries = append(l.entries, e)
	l.head = e.Seq
	l.prune(now)
}

// prune drops the entries beyond maxEvents and those older than maxAge.
func (l *eventLog) prune(now time.Time) {
	drop := 0
	if n := len(l.entries) - l.maxEvents; n > 0 {
		drop = n
	}
	cutoff := now.Add(-l.maxAge)
	for drop < len(l.entries) && l.entries[drop].Time.Before(cutoff) {
		drop++
	}
	if drop == 0 {
		return
	}
	last := l.entries[drop-1]
	l.floor, l.floorTime = last.Seq, last.Time
	clear(l.entries[:drop]) // let the dropped data go
	l.entries = l.entries[drop:]
}

// after returns copies of at most max entries with sequence numbers above
// pos, oldest first.
func (l *eventLog) after(pos uint64, max int) []Entry {
	if len(l.entries) == 0 || pos >= l.head {
		return nil
	}
	first := l.entries[0].Seq
	i := 0
	if pos >= first {
		i = int(pos - first + 1)
	}
	end := min(len(l.entries), i+max)
	return append([]Entry(nil), l.entries[i:end]...)
}

// placement is where a new stream starts reading: after pos; truncated
// says that some occurrences after the client's cursor will not be sent.
type placement struct {
	pos       uint64
	truncated bool
}

// place finds where a stream starts. A nil cursor means "from now". A
// cursor of this log's epoch (known=true) starts after its sequence number
// (clamped to head); one from another epoch starts at the oldest retained
// occurrence and is truncated. Occurrences retention dropped after the
// start make it truncated, unless maxAge excludes them anyway; maxAge
// (when set) skips retained occurrences older than now-maxAge, and the
// start is truncated when a skipped one matched the stream's arguments.
func (l *eventLog) place(c *cursor, known bool, maxAge *time.Duration, now time.Time, match func(json.RawMessage) bool) placement {
	if c == nil {
		return placement{pos: l.head}
	}
	p := placement{}
	if known {
		p.pos = min(c.seq, l.head)
	} else {
		p.truncated = true
	}
	var cutoff time.Time
	if maxAge != nil {
		cutoff = now.Add(-*maxAge)
	}
	if p.pos < l.floor {
		if maxAge == nil || !l.floorTime.Before(cutoff) {
			p.truncated = true
		}
		p.pos = l.floor
	}
	if maxAge == nil {
		return p
	}
	for _, e := range l.after(p.pos, len(l.entries)) {
		if !e.Time.Before(cutoff) {
			break
		}
		p.pos = e.Seq
		if match(e.Data) {
			p.truncated = true
		}
	}
	return p
}
