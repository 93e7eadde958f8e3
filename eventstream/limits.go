package eventstream

import "time"

// The protocol's numbers (events-protocol.md (b) and (c)). They are the
// defaults of Limits and BatchLimits; tests and configuration may change
// them through those structs.
const (
	// DefaultActivationTimeout bounds the wait for a stream's
	// notifications/events/active acknowledgement, on the first open and on
	// every reopen.
	DefaultActivationTimeout = 15 * time.Second
	// DefaultHeartbeatTimeout is the watchdog: an active stream with no
	// valid event or heartbeat for this long is treated as lost (the spec's
	// heartbeat is at most 30 s; a client waits a little over twice that).
	DefaultHeartbeatTimeout = 65 * time.Second
	// DefaultRetryBase is the first reconnect delay; each retry doubles it
	// (1, 2, 4, 8, 16 s), capped at DefaultRetryMax.
	DefaultRetryBase = time.Second
	// DefaultRetryMax caps one reconnect delay.
	DefaultRetryMax = 30 * time.Second
	// DefaultMaxRetries is the reconnect budget of one recovery episode:
	// 5 retries, so at most 6 stream opens between two valid events or
	// heartbeats.
	DefaultMaxRetries = 5
	// DefaultDedupeWindow is how many event ids one logical subscription
	// remembers (first-seen order, oldest forgotten first).
	DefaultDedupeWindow = 10_000

	// DefaultBatchWindow is the fixed batching window, counted from the
	// first item of a batch (not sliding).
	DefaultBatchWindow = 500 * time.Millisecond
	// DefaultBatchItems bounds the items of one batch.
	DefaultBatchItems = 256
	// DefaultBatchChars bounds the summed size of one batch's items, each
	// measured in characters as the reference counts them: UTF-16 code
	// units of its JSON text (see Encoded).
	DefaultBatchChars = 64_000
)

// Frame limits (events-protocol.md (a), "Event validation"), in
// characters: Unicode code points, not bytes.
const (
	MaxEventIDChars   = 1024
	MaxEventNameChars = 256
	MaxTimestampChars = 80
)

// Wakeup size limits (events-protocol.md (c)). Sizes are characters as the
// reference counts them: the length of the JSON text as a JavaScript
// string, in UTF-16 code units (a character outside the Basic
// Multilingual Plane, such as an emoji, counts 2); cuts never split a
// character.
const (
	// MaxEventChars: an event whose JSON encoding is longer has its data
	// replaced by a preview (see PrepareEvent).
	MaxEventChars = 24_000
	// PreviewChars bounds the preview of a shortened event's data.
	PreviewChars = 20_000
	// MaxStatusErrorChars bounds the error text of a status wakeup item.
	MaxStatusErrorChars = 2_000
)

// Limits are one subscription's timers and budgets. A zero field takes its
// default.
type Limits struct {
	ActivationTimeout time.Duration
	HeartbeatTimeout  time.Duration
	RetryBase         time.Duration
	RetryMax          time.Duration
	// MaxRetries is the reconnect budget; a negative value means none
	// (the first interruption fails the subscription).
	MaxRetries   int
	DedupeWindow int
}

func (l Limits) withDefaults() Limits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&l.ActivationTimeout, DefaultActivationTimeout)
	def(&l.HeartbeatTimeout, DefaultHeartbeatTimeout)
	def(&l.RetryBase, DefaultRetryBase)
	def(&l.RetryMax, DefaultRetryMax)
	switch {
	case l.MaxRetries == 0:
		l.MaxRetries = DefaultMaxRetries
	case l.MaxRetries < 0:
		l.MaxRetries = 0
	}
	if l.DedupeWindow <= 0 {
		l.DedupeWindow = DefaultDedupeWindow
	}
	return l
}

// retryDelay is the wait before retry number attempt+1: RetryBase doubled
// attempt times, capped at RetryMax.
func (l Limits) retryDelay(attempt int) time.Duration {
	d := l.RetryBase
	for range attempt {
		if d >= l.RetryMax {
			break
		}
		d *= 2
	}
	return min(d, l.RetryMax)
}

// BatchLimits are one batcher's window and capacity. A zero field takes its
// default.
type BatchLimits struct {
	Window   time.Duration
	MaxItems int
	MaxChars int
}

func (l BatchLimits) withDefaults() BatchLimits {
	if l.Window <= 0 {
		l.Window = DefaultBatchWindow
	}
	if l.MaxItems <= 0 {
		l.MaxItems = DefaultBatchItems
	}
	if l.MaxChars <= 0 {
		l.MaxChars = DefaultBatchChars
	}
	return l
}
