package clock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestManualFiresInDueThenArmOrder(t *testing.T) {
	m := NewManual(time.Time{})
	var got []string
	m.AfterFunc(2*time.Second, func() { got = append(got, "b") })
	m.AfterFunc(time.Second, func() { got = append(got, "a") })
	m.AfterFunc(2*time.Second, func() { got = append(got, "c") })
	stopped := m.AfterFunc(1500*time.Millisecond, func() { got = append(got, "never") })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer reported false")
	}
	if stopped.Stop() {
		t.Fatal("second Stop reported true")
	}
	m.Advance(1999 * time.Millisecond)
	if len(got) != 1 || got[0] != "a" {
		t.Fatalf("after 1.999s got %v, want [a]", got)
	}
	m.Advance(time.Millisecond)
	if want := "a b c"; join(got) != want {
		t.Fatalf("got %q, want %q", join(got), want)
	}
	if !m.Now().Equal(Epoch.Add(2 * time.Second)) {
		t.Fatalf("now = %v", m.Now())
	}
}

func TestManualCallbackArmsTimerInsideWindow(t *testing.T) {
	m := NewManual(time.Time{})
	var at []time.Duration
	m.AfterFunc(time.Second, func() {
		at = append(at, m.Now().Sub(Epoch))
		m.AfterFunc(time.Second, func() { at = append(at, m.Now().Sub(Epoch)) })
	})
	m.Advance(5 * time.Second)
	if len(at) != 2 || at[0] != time.Second || at[1] != 2*time.Second {
		t.Fatalf("fired at %v, want [1s 2s]", at)
	}
	if m.Pending() != 0 {
		t.Fatalf("pending = %d", m.Pending())
	}
}

func TestFireNextJumps(t *testing.T) {
	m := NewManual(time.Time{})
	fired := 0
	m.AfterFunc(time.Hour, func() { fired++ })
	if due, ok := m.NextDue(); !ok || !due.Equal(Epoch.Add(time.Hour)) {
		t.Fatalf("NextDue = %v %v", due, ok)
	}
	if !m.FireNext() || fired != 1 || !m.Now().Equal(Epoch.Add(time.Hour)) {
		t.Fatalf("FireNext: fired=%d now=%v", fired, m.Now())
	}
	if m.FireNext() {
		t.Fatal("FireNext with nothing armed reported true")
	}
}

func TestSeededRandIsDeterministic(t *testing.T) {
	a, b := NewSeededRand(42), NewSeededRand(42)
	c := NewSeededRand(43)
	same := true
	for i := 0; i < 8; i++ {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		if x != y {
			t.Fatalf("same seed diverged at %d", i)
		}
		if x != z {
			same = false
		}
	}
	if same {
		t.Fatal("different seeds gave the same sequence")
	}
	if id := HexID(NewSeededRand(1), 6); len(id) != 12 || id != HexID(NewSeededRand(1), 6) {
		t.Fatalf("HexID = %q", id)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestWait(t *testing.T) {
	m := NewManual(time.Time{})
	synctest.Test(t, func(t *testing.T) {
		passed := make(chan bool)
		go func() { passed <- Wait(context.Background(), m, time.Second) }()
		synctest.Wait()
		m.Advance(time.Second - 1)
		select {
		case <-passed:
			t.Fatal("Wait passed early")
		default:
		}
		m.Advance(1)
		if !<-passed {
			t.Fatal("Wait did not pass after its duration")
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Wait(ctx, m, time.Second) || Wait(ctx, m, 0) {
		t.Fatal("Wait passed with its context ended")
	}
	if m.Pending() != 0 {
		t.Fatal("Wait left its timer armed")
	}
	if !Wait(context.Background(), m, 0) {
		t.Fatal("a zero wait did not pass")
	}
}
