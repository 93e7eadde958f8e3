package eventstream

import (
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// Batcher collects wakeup items over a fixed window and turns them into
// one host message. The window starts with the first item of a batch (or
// the first dropped one) and does not slide. A batch holds at most
// MaxItems items whose encodings sum to at most MaxChars characters; an item that
// does not fit is dropped and counted (dropped_events or
// dropped_statuses), never deferred, and a later smaller item may still
// fit. Clear discards everything (shutdown wakes nothing).
//
// Two batchers run side by side: NewEventBatcher for events and
// NewStatusBatcher for status changes. A Batcher is owned by one actor.
type Batcher[T any] struct {
	lim    BatchLimits
	format format[T]

	items   []Encoded[T]
	size    int // sum of the items' sizes (Encoded.Size)
	dropped int
	flush   clock.Slot

	stats BatchStats
}

// BatchStats count a batcher's work since it was made.
type BatchStats struct {
	// Batches counts host messages made; Items the items they carried;
	// Dropped the items dropped for lack of room; Cleared the items
	// discarded by Clear.
	Batches, Items, Dropped, Cleared uint64
}

// NewEventBatcher returns the events batcher: its wakeups are
// "mcp-events" messages whose text is EventsPreamble and
// {"events":[...],"dropped_events":N}.
func NewEventBatcher(lim BatchLimits) *Batcher[*EventItem] {
	return &Batcher[*EventItem]{lim: lim.withDefaults(), format: eventsFormat}
}

// NewStatusBatcher returns the status batcher: its wakeups are
// "mcp-events-status" messages whose text is StatusPreamble and
// {"subscriptions":[...],"dropped_statuses":N}.
func NewStatusBatcher(lim BatchLimits) *Batcher[Snapshot] {
	return &Batcher[Snapshot]{lim: lim.withDefaults(), format: statusFormat}
}

// Add adds one prepared item (PrepareEvent, PrepareStatus), or counts it
// as dropped when it does not fit. It returns Arm for the flush timer when
// this starts a window, nil otherwise.
func (b *Batcher[T]) Add(it Encoded[T]) []Effect {
	// Dropped, not deferred: bounded delivery, not a queue.
	if len(b.items) < b.lim.MaxItems && b.size+it.Size <= b.lim.MaxChars {
		b.items = append(b.items, it)
		b.size += it.Size
	} else {
		b.dropped++
		b.stats.Dropped++
	}
	// A drop also opens the window, so a batch of drops is still told.
	if b.flush.Armed() {
		return nil
	}
	return []Effect{Arm{Kind: TimerFlush, After: b.lim.Window, Token: b.flush.Arm()}}
}

// AddDropped counts n items as dropped in the current batch (items that
// were lost before they could be added, such as those of a batch whose
// delivery failed), opening the window as a drop does.
func (b *Batcher[T]) AddDropped(n int) []Effect {
	if n <= 0 {
		return nil
	}
	b.dropped += n
	b.stats.Dropped += uint64(n)
	if b.flush.Armed() {
		return nil
	}
	return []Effect{Arm{Kind: TimerFlush, After: b.lim.Window, Token: b.flush.Arm()}}
}

// Pending returns the items and drops waiting for the flush.
func (b *Batcher[T]) Pending() (items, dropped int) { return len(b.items), b.dropped }

// Stats returns the counters.
func (b *Batcher[T]) Stats() BatchStats { return b.stats }

// Fire reports that the flush timer armed with token fired. It returns the
// wakeup to hand to Host.Deliver (TriggerTurn, DeliverAs "followUp"), and
// false for a stale token or an empty batch.
func (b *Batcher[T]) Fire(token uint64) (messages.HostMessage, bool) {
	if !b.flush.Fired(token) {
		return messages.HostMessage{}, false
	}
	if len(b.items) == 0 && b.dropped == 0 {
		return messages.HostMessage{}, false
	}
	items := make([]T, len(b.items))
	for i, it := range b.items {
		items[i] = it.Item
	}
	m := messages.HostMessage{
		Kind:        b.format.kind,
		Text:        b.format.text(b.items, b.size, b.dropped),
		Details:     b.format.details(items, b.dropped),
		TriggerTurn: true,
		DeliverAs:   DeliverAs,
	}
	b.stats.Batches++
	b.stats.Items += uint64(len(b.items))
	b.reset()
	return m, true
}

// Clear discards the pending batch and its drop count; it returns Disarm
// for the flush timer when one was armed.
func (b *Batcher[T]) Clear() []Effect {
	b.stats.Cleared += uint64(len(b.items))
	b.reset()
	if !b.flush.Disarm() {
		return nil
	}
	return []Effect{Disarm{Kind: TimerFlush}}
}

func (b *Batcher[T]) reset() {
	clear(b.items) // let the items' data go
	b.items, b.size, b.dropped = b.items[:0], 0, 0
}
