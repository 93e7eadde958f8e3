package supervisor

import "time"

// RestartPolicy decides what happens when a server actor crashes (panics).
// The defaults: up to 5 restarts within 60 s, the n-th restart after
// BaseDelay·2^(n-1) (100 ms, 200 ms, 400 ms, 800 ms, 1.6 s), capped at
// MaxDelay; a 6th crash within the window gives up, and the server stays
// down until an explicit connect.
type RestartPolicy struct {
	MaxRestarts int
	Window      time.Duration
	BaseDelay   time.Duration
	MaxDelay    time.Duration
}

// DefaultRestartPolicy is the policy the root supervisor uses.
var DefaultRestartPolicy = RestartPolicy{MaxRestarts: 5, Window: 60 * time.Second, BaseDelay: 100 * time.Millisecond, MaxDelay: 10 * time.Second}

// RestartDecision is the outcome of one crash.
type RestartDecision struct {
	// GiveUp is set when the crash exhausted the policy: keep the server
	// down. Otherwise restart after Delay.
	GiveUp bool
	Delay  time.Duration
	// Recent is how many crashes (this one included) fall within the window.
	Recent int
}

// Decide returns the decision for a crash at now given the earlier crash
// times, and the history to keep for the next crash.
func (p RestartPolicy) Decide(history []time.Time, now time.Time) (RestartDecision, []time.Time) {
	recent := make([]time.Time, 0, len(history)+1)
	for _, t := range history {
		if now.Sub(t) < p.Window {
			recent = append(recent, t)
		}
	}
	recent = append(recent, now)
	if len(recent) > p.MaxRestarts {
		return RestartDecision{GiveUp: true, Recent: len(recent)}, nil
	}
	delay := p.BaseDelay << (len(recent) - 1)
	if delay > p.MaxDelay || delay <= 0 {
		delay = p.MaxDelay
	}
	return RestartDecision{Delay: delay, Recent: len(recent)}, recent
}
