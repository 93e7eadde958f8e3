package supervisor

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

// The dial of a new connection: the lifecycle asks for it (Dial), the
// actor acquires one of the runtime's start slots, the slot is granted
// (SlotGranted: StartDial and the startup deadline, or the slot goes back
// when the dial is no longer wanted), the dial may report progress, and it
// ends with Dialed or with its startup deadline passing.

// SlotGranted reports that the root granted a start slot for generation
// gen: the dial starts if it is still wanted, else the slot goes back.
func (s *Server) SlotGranted(now time.Time, gen uint64) []Effect {
	s.input(now)
	if s.closed || gen != s.life.Gen() || s.dialGen != 0 || s.life.State(now) != messages.StateConnecting {
		s.emit(ReleaseSlot{Gen: gen})
		return s.out
	}
	s.slotGen, s.dialGen = gen, gen
	s.emit(StartDial{Gen: gen})
	s.emit(Arm{Kind: TimerStartup, After: s.cfg.StartupTimeout, Token: gen})
	return s.out
}

// DialCurrent reports whether gen is the dial in progress: its server
// information is the server's from now on.
func (s *Server) DialCurrent(gen uint64) bool { return s.dialGen == gen && gen != 0 }

// endDial forgets the dial of gen and returns its start slot.
func (s *Server) endDial(gen uint64) {
	if s.dialGen == gen {
		s.dialGen = 0
		s.emit(Disarm{Kind: TimerStartup})
	}
	if s.slotGen == gen {
		s.slotGen = 0
		s.emit(ReleaseSlot{Gen: gen})
	}
}

// Dialed reports the outcome of the dial of generation gen: conn says
// whether it opened a connection (which then stays open until
// ConnClosed), caps what its server advertised.
func (s *Server) Dialed(now time.Time, gen uint64, err *messages.Error, conn bool, caps Caps) []Effect {
	s.input(now)
	delete(s.owed.dials, gen)
	s.dialed(gen, err, conn, caps)
	s.maybeStopped() // a shutdown may have waited for this outcome
	return s.out
}

func (s *Server) dialed(gen uint64, err *messages.Error, conn bool, caps Caps) {
	wasCurrent := s.dialGen == gen
	s.endDial(gen)
	if conn {
		s.open[gen] = true
		if wasCurrent {
			s.caps = caps
		}
	}
	if !wasCurrent && err != nil {
		return // a dial already given up on (timed out, cancelled, older incarnation)
	}
	s.run(s.life.Dialed(s.now, gen, err))
	if err == nil && wasCurrent {
		s.emit(PublishInfo{Gen: gen})
		if s.cfg.ListOnConnect && s.life.Connected(gen) && !s.closed {
			// A new connection lists the catalog; callers waiting for one
			// join this listing.
			s.join(gen, false, 0, nil)
		}
	}
}

// DialProgress holds the startup deadline while the dial installs the
// server's package (which has a budget of its own, kept by the dialer) and
// arms it afresh once the server itself starts.
func (s *Server) DialProgress(now time.Time, gen uint64, installing bool) []Effect {
	s.input(now)
	if s.dialGen != gen || s.closed {
		return s.out
	}
	s.emit(Disarm{Kind: TimerStartup})
	if !installing {
		s.emit(Arm{Kind: TimerStartup, After: s.cfg.StartupTimeout, Token: gen})
	}
	return s.out
}

// startupExpired gives up on the dial of gen (the startup timer's token).
func (s *Server) startupExpired(gen uint64) {
	if s.dialGen != gen {
		return
	}
	s.emit(CancelDial{Gen: gen})
	s.endDial(gen)
	err := messages.Errorf(messages.KindInitTimeout, s.cfg.Name, "server did not finish starting within %s (startupTimeoutMs)", s.cfg.StartupTimeout)
	s.run(s.life.Dialed(s.now, gen, err))
}
