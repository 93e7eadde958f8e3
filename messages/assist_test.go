package messages

import "testing"

// An offered job goes to the waiting caller, exactly once; a second offer
// while one is pending, an offer to a nil or closed Assist are refused
// (the port then runs the job itself); a job never taken runs through its
// fallback when the caller stops waiting.
func TestAssist(t *testing.T) {
	var nilAssist *Assist
	if nilAssist.Offer(func() {}, func() {}) {
		t.Fatal("a nil Assist took a job")
	}
	nilAssist.Close() // no panic

	a := NewAssist()
	ran := ""
	if !a.Offer(func() { ran += "job1" }, func() { ran += "fallback1" }) {
		t.Fatal("an open Assist refused a job")
	}
	if a.Offer(func() {}, func() {}) {
		t.Fatal("an Assist took a second job while one was pending")
	}
	select {
	case <-a.Wake():
	default:
		t.Fatal("no wake-up after an offer")
	}
	job := a.Take()
	if job == nil {
		t.Fatal("Take returned no job")
	}
	job()
	if a.Take() != nil {
		t.Fatal("a job was taken twice")
	}
	if !a.Offer(func() { ran += "job2" }, func() { ran += "+fallback2" }) {
		t.Fatal("an open Assist refused a job after the first was taken")
	}
	a.Close() // job2 never taken: its fallback runs
	if ran != "job1+fallback2" {
		t.Fatalf("ran %q, want job1+fallback2", ran)
	}
	if a.Offer(func() {}, func() {}) {
		t.Fatal("a closed Assist took a job")
	}
	a.Close() // idempotent: no fallback runs again
	if ran != "job1+fallback2" {
		t.Fatalf("a second Close ran %q", ran)
	}
}
