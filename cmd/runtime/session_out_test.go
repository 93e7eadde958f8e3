package main

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// Issue 20, bad input: a host that stops reading stdout makes a delivery
// wait at most deliverWait, then it is counted as dropped, and a notice
// says so once the host reads again; the queue never grows past its bound.
func TestSessionOutDropsDeliveriesForAHostThatStopsReading(t *testing.T) {
	r, w := io.Pipe()
	o := newSessionOut(w)
	for i := 0; i <= sessionQueue; i++ { // the writer holds one line; the queue the rest
		o.send(map[string]any{"status": i})
	}
	o.offer(map[string]any{"deliver": "late"}) // returns after deliverWait: nobody reads
	if got := o.dropped.Load(); got != 1 {
		t.Fatalf("dropped %d deliveries, want 1", got)
	}
	done := make(chan []string)
	go func() {
		var lines []string
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		done <- lines
	}()
	o.close()
	_ = w.Close()
	lines := <-done
	if len(lines) != sessionQueue+2 || strings.Contains(strings.Join(lines, "\n"), "late") {
		t.Fatalf("%d lines written (want %d: every status and one notice, no late delivery)", len(lines), sessionQueue+2)
	}
	if !strings.Contains(lines[1], `"notice"`) || !strings.Contains(lines[1], "1 deliveries or notices were dropped") {
		t.Errorf("the line after the first is %s, want the dropped notice", lines[1])
	}
}
