package testkit

import (
	"context"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// CrashArm is a crash-injection seam for tests (a messages.CrashInjector:
// pass its Inject): it crashes the next message of the actor kind it is
// armed with, once, or every one while armed always.
type CrashArm struct {
	mu     sync.Mutex
	kind   messages.ActorKind
	always bool
	fired  int
	sig    Signal
}

// Arm crashes the next message of kind k ("" disarms).
func (a *CrashArm) Arm(k messages.ActorKind) { a.ArmAlways(k, false) }

// ArmAlways crashes every message of kind k while always holds; with
// always false it is Arm.
func (a *CrashArm) ArmAlways(k messages.ActorKind, always bool) {
	a.mu.Lock()
	a.kind, a.always = k, always
	a.mu.Unlock()
}

// Inject is the seam: whether this message of kind k is to crash.
func (a *CrashArm) Inject(k messages.ActorKind) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kind == "" || k != a.kind {
		return false
	}
	if !a.always {
		a.kind = ""
	}
	a.fired++
	a.sig.Notify()
	return true
}

// WaitFired waits until n crashes were injected in all.
func (a *CrashArm) WaitFired(ctx context.Context, t testing.TB, n int) {
	t.Helper()
	Until(ctx, t, &a.sig, "the injected crash", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.fired >= n
	})
}
