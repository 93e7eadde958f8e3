package clock

// Slot is the pure half of a timer that a state machine (supervisor/,
// eventstream/) asks its actor to arm: the token that identifies the armed
// timer. The state machine arms with a fresh token from Arm and returns an
// Arm effect carrying it; the actor arms a real timer on its Clock whose
// firing hands the token back. Disarm and a new Arm make the armed token
// stale, so a firing already on its way when the timer was stopped or
// replaced is recognised (Fired) and ignored: the actor never has to win a
// race against a timer it stopped. A Slot holds no timer and reads no
// clock.
type Slot struct {
	token uint64
	armed bool
}

// Arm fills the slot and returns the new timer's token.
func (s *Slot) Arm() uint64 {
	s.token++
	s.armed = true
	return s.token
}

// Disarm empties the slot; it reports whether a timer was armed (whose
// firing is stale from now on).
func (s *Slot) Disarm() bool {
	if !s.armed {
		return false
	}
	s.armed = false
	s.token++
	return true
}

// Armed reports whether the slot holds a timer.
func (s *Slot) Armed() bool { return s.armed }

// Fired reports whether a firing carrying token is the armed timer's; if
// it is, the slot is empty from now on.
func (s *Slot) Fired(token uint64) bool {
	if !s.armed || token != s.token {
		return false
	}
	s.armed = false
	return true
}
