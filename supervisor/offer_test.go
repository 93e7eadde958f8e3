package supervisor

import (
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// A member offers a server until it fails, backs off, is kept down,
// disabled or closed; it offers it again only once it connected. A
// withdrawn server is tried by the member itself when its retry is due,
// if it is idle or failed and does not want credentials, with the delay
// doubling up to the maximum.
func TestOfferNext(t *testing.T) {
	r := Retry{Every: 10 * time.Second, Max: 35 * time.Second}
	withdrawn := func(tries int, at time.Duration) Offer {
		return Offer{Withdrawn: true, Tries: tries, RetryAt: t0.Add(at)}
	}
	st := func(s messages.ServerState) messages.ServerStatus { return messages.ServerStatus{Name: "s", State: s} }
	authFailed := st(messages.StateFailed)
	authFailed.LastError = &messages.Error{Kind: messages.KindAuthRequired, Server: "s", Message: "needs credentials"}
	connectFailed := st(messages.StateFailed)
	connectFailed.LastError = &messages.Error{Kind: messages.KindConnectFailed, Server: "s", Message: "no such file"}
	tests := []struct {
		name  string
		was   Offer
		st    messages.ServerStatus
		now   time.Duration
		want  Offer
		probe bool
	}{
		{"never tried: offered", Offer{}, st(messages.StateIdle), 0, Offer{}, false},
		{"connecting for the first time: offered", Offer{}, st(messages.StateConnecting), 0, Offer{}, false},
		{"connected: offered", Offer{}, st(messages.StateConnected), 0, Offer{}, false},
		{"failed: withdrawn, retry in Every", Offer{}, connectFailed, 0, withdrawn(0, 10*time.Second), false},
		{"reconnecting (backoff): withdrawn", Offer{}, st(messages.StateBackoff), 0, withdrawn(0, 10*time.Second), false},
		{"kept down: withdrawn", Offer{}, st(messages.StateDown), 0, withdrawn(0, 10*time.Second), false},
		{"disabled: withdrawn", Offer{}, st(messages.StateDisabled), 0, withdrawn(0, 10*time.Second), false},
		{"closed: withdrawn", Offer{}, st(messages.StateClosed), 0, withdrawn(0, 10*time.Second), false},
		{"failed again: the retry stands", withdrawn(1, 20*time.Second), connectFailed, 5 * time.Second, withdrawn(1, 20*time.Second), false},
		{"idle after failing (memory expired): still withdrawn", withdrawn(0, 10*time.Second), st(messages.StateIdle), 5 * time.Second, withdrawn(0, 10*time.Second), false},
		{"connecting after failing: still withdrawn", withdrawn(0, 10*time.Second), st(messages.StateConnecting), 5 * time.Second, withdrawn(0, 10*time.Second), false},
		{"connected after failing: offered again", withdrawn(3, 10*time.Second), st(messages.StateConnected), 5 * time.Second, Offer{}, false},
		{"retry due, failed: tried, next in 2×Every", withdrawn(0, 10*time.Second), connectFailed, 10 * time.Second, withdrawn(1, 30*time.Second), true},
		{"retry due, idle: tried", withdrawn(1, 30*time.Second), st(messages.StateIdle), 30 * time.Second, withdrawn(2, 65*time.Second), true},
		{"retry due: the delay stops at Max", withdrawn(2, 65*time.Second), st(messages.StateIdle), 65 * time.Second, withdrawn(3, 100*time.Second), true},
		{"retry due, connecting: not tried", withdrawn(0, 10*time.Second), st(messages.StateConnecting), 10 * time.Second, withdrawn(0, 10*time.Second), false},
		{"retry due, reconnecting: its lifecycle retries", withdrawn(0, 10*time.Second), st(messages.StateBackoff), 10 * time.Second, withdrawn(0, 10*time.Second), false},
		{"retry due, kept down: not tried", withdrawn(0, 10*time.Second), st(messages.StateDown), 10 * time.Second, withdrawn(0, 10*time.Second), false},
		{"retry due, disabled: never tried", withdrawn(0, 10*time.Second), st(messages.StateDisabled), 10 * time.Second, withdrawn(0, 10*time.Second), false},
		{"retry due, wants credentials: not tried", withdrawn(0, 10*time.Second), authFailed, 10 * time.Second, withdrawn(0, 10*time.Second), false},
	}
	for _, tc := range tests {
		got, probe := tc.was.Next(tc.st, t0.Add(tc.now), r)
		if got != tc.want || probe != tc.probe {
			t.Errorf("%s: got %+v probe %v, want %+v probe %v", tc.name, got, probe, tc.want, tc.probe)
		}
		if got.Offered() == got.Withdrawn {
			t.Errorf("%s: Offered and Withdrawn agree", tc.name)
		}
	}
}

// A request that failed without reaching the server withdraws it at
// once; a withdrawn one keeps its retry.
func TestOfferWithdraw(t *testing.T) {
	r := Retry{Every: 10 * time.Second}
	if got := (Offer{}).Withdraw(t0, r); got != (Offer{Withdrawn: true, RetryAt: t0.Add(10 * time.Second)}) {
		t.Errorf("withdraw an offered server: %+v", got)
	}
	was := Offer{Withdrawn: true, Tries: 2, RetryAt: t0.Add(time.Minute)}
	if got := was.Withdraw(t0, r); got != was {
		t.Errorf("withdraw a withdrawn server: %+v, want %+v", got, was)
	}
	// Idle after the failure (an explicit connect's is not remembered):
	// still withdrawn.
	if got, _ := (Offer{}).Withdraw(t0, r).Next(messages.ServerStatus{State: messages.StateIdle}, t0.Add(time.Second), r); got.Offered() {
		t.Errorf("idle after a withdrawal: offered")
	}
}

// Defaults: the first retry after DefaultRetryEvery, at most
// DefaultRetryMax apart.
func TestOfferRetryDefaults(t *testing.T) {
	o, _ := Offer{}.Next(messages.ServerStatus{State: messages.StateFailed}, t0, Retry{})
	if o.RetryAt != t0.Add(DefaultRetryEvery) {
		t.Errorf("first retry at %v, want %v", o.RetryAt.Sub(t0), DefaultRetryEvery)
	}
	if d := (Retry{}).withDefaults().delay(20); d != DefaultRetryMax {
		t.Errorf("delay after 20 tries: %v, want %v", d, DefaultRetryMax)
	}
}

// Only failures that never reached the server may run elsewhere.
func TestUnreached(t *testing.T) {
	for k, want := range map[messages.ErrorKind]bool{
		messages.KindConnectFailed: true, messages.KindInitFailed: true, messages.KindInitTimeout: true,
		messages.KindServerBackoff: true, messages.KindServerFailed: true, messages.KindServerDisabled: true,
		messages.KindAuthRequired: true,
		messages.KindDisconnected: false, messages.KindRequestTimeout: false, messages.KindToolError: false,
		messages.KindAborted: false, messages.KindRPC: false, messages.KindProtocol: false, messages.KindNone: false,
	} {
		if Unreached(k) != want {
			t.Errorf("Unreached(%s) = %v, want %v", k, !want, want)
		}
	}
}
