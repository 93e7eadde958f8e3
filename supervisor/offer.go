package supervisor

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Offer is whether a member of a shared runtime's cluster offers one of
// its servers to the other members (advertises it in its view), and when
// it tries a withdrawn one again itself. The zero value offers: a server
// never tried is taken to be runnable, as its configuration names it.
//
//	offered ──(backoff, failed, down, disabled, closed)──▶ withdrawn
//	withdrawn ──(connected)──▶ offered
//	idle and connecting leave either as it is
//
// So a server that failed is offered again only once it has connected
// again: by the member's own retry (Next's probe), by its lifecycle's
// reconnects (keep-alive), or by a request of one of the member's own
// sessions.
type Offer struct {
	// Withdrawn: the member does not offer the server now.
	Withdrawn bool
	// Tries counts the member's own retries since it was withdrawn.
	Tries int
	// RetryAt is when the member tries a withdrawn server itself next.
	RetryAt time.Time
}

// Retry spaces a member's own retries of a server it withdrew: the first
// Every after the withdrawal, then doubling up to Max.
type Retry struct {
	Every, Max time.Duration
}

// Defaults of Retry (a keep-alive server's reconnect backoff's numbers).
const (
	DefaultRetryEvery = 30 * time.Second
	DefaultRetryMax   = 5 * time.Minute
)

func (r Retry) withDefaults() Retry {
	if r.Every <= 0 {
		r.Every = DefaultRetryEvery
	}
	if r.Max < r.Every {
		r.Max = max(DefaultRetryMax, r.Every)
	}
	return r
}

// delay is the wait before retry number tries+1.
func (r Retry) delay(tries int) time.Duration {
	d := r.Every
	for i := 0; i < tries && d < r.Max; i++ {
		d *= 2
	}
	return min(d, r.Max)
}

// Next takes a server's status at now and returns the offer that follows
// and whether the member should try the server itself now (an explicit
// connect, which bypasses failure memory). A withdrawn server is tried
// when its retry is due and it is idle or failed; never while it
// connects, while its lifecycle reconnects it (backoff), while it is kept
// down after crashing (only an explicit connect by a person revives it),
// when it is disabled or closed, or when its last error asks for
// credentials (a connect would start an authorization nobody asked for).
func (o Offer) Next(st messages.ServerStatus, now time.Time, r Retry) (Offer, bool) {
	r = r.withDefaults()
	switch st.State {
	case messages.StateConnected:
		return Offer{}, false
	case messages.StateBackoff, messages.StateFailed, messages.StateDown, messages.StateDisabled, messages.StateClosed:
		if !o.Withdrawn {
			o = Offer{Withdrawn: true, RetryAt: now.Add(r.delay(0))}
		}
	}
	if !o.Withdrawn || now.Before(o.RetryAt) {
		return o, false
	}
	if st.State != messages.StateIdle && st.State != messages.StateFailed {
		return o, false
	}
	if st.LastError != nil && st.LastError.Kind == messages.KindAuthRequired {
		return o, false
	}
	o.Tries++
	o.RetryAt = now.Add(r.delay(o.Tries))
	return o, true
}

// Withdraw is a request of the member's that failed here without
// reaching the server (Unreached), whatever its status says now (a
// failed explicit connect leaves a lazy server idle, not failed).
func (o Offer) Withdraw(now time.Time, r Retry) Offer {
	if o.Withdrawn {
		return o
	}
	return Offer{Withdrawn: true, RetryAt: now.Add(r.withDefaults().delay(0))}
}

// Offered reports whether the member offers the server.
func (o Offer) Offered() bool { return !o.Withdrawn }

// Unreached reports whether an operation that failed with kind never
// reached its server, so running it elsewhere cannot run it twice: the
// connect failed or was not tried (failure memory, kept down, disabled),
// or the server wants credentials this member does not have.
func Unreached(kind messages.ErrorKind) bool {
	switch kind {
	case messages.KindConnectFailed, messages.KindInitFailed, messages.KindInitTimeout,
		messages.KindServerBackoff, messages.KindServerFailed, messages.KindServerDisabled, messages.KindAuthRequired:
		return true
	}
	return false
}
