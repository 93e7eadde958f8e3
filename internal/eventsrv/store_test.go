package eventsrv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/clock"
)

// TestStateDirSurvivesRestart: a second server on the same state directory
// keeps the epoch, the retained occurrences and the floor, so old cursors
// replay, and gaps are still reported.
func TestStateDirSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	var epoch, c2 string
	withServer(t, Options{StateDir: dir, MaxEvents: 3}, basicTypes(), func(h *harness) {
		for n := 1; n <= 20; n++ {
			h.publish("a", map[string]int{"n": n})
		}
		epoch, c2 = h.srv.Epoch(), h.cursor("a", 18)
	})
	b, err := os.ReadFile(filepath.Join(dir, "a.events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines > 2*3+1 {
		t.Fatalf("the log file holds %d lines; it should be rewritten at twice the retained count", lines)
	}
	// A torn last line is ignored.
	f, err := os.OpenFile(filepath.Join(dir, "a.events.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"seq":21,"id":"x"`)
	_ = f.Close()

	withServer(t, Options{StateDir: dir, MaxEvents: 3, Rand: clock.NewSeededRand(99)}, basicTypes(), func(h *harness) {
		if h.srv.Epoch() != epoch {
			h.t.Fatalf("epoch %q after a restart, was %q", h.srv.Epoch(), epoch)
		}
		h.open(`1`, `{"name":"a","cursor":"`+c2+`"}`)
		h.expect(`1`, `active @18`, `event "evt_E_19" "a" {"n":19} @19`, `event "evt_E_20" "a" {"n":20} @20`)
		h.open(`2`, `{"name":"a","cursor":"`+h.cursor("a", 16)+`"}`)
		h.expect(`2`, `active @16`, `active @17 truncated`, `event "evt_E_18" "a" {"n":18} @18`,
			`event "evt_E_19" "a" {"n":19} @19`, `event "evt_E_20" "a" {"n":20} @20`)
		h.publish("a", map[string]int{"n": 21})
		got := h.trace(`1`)
		if len(got) != 2 || !strings.HasPrefix(got[0], `event "evt_E_21"`) {
			h.t.Fatalf("after the restart: %q", got)
		}
	})
	// Without the state directory a restart is a new epoch.
	withServer(t, Options{MaxEvents: 3, Rand: clock.NewSeededRand(99)}, basicTypes(), func(h *harness) {
		h.open(`1`, `{"name":"a","cursor":"`+c2+`"}`)
		h.expect(`1`, `active cursor=`+c2, `active @0 truncated`)
	})
}

func TestStateDirErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{StateDir: file}, basicTypes()...); err == nil {
		t.Fatal("a state directory that is a file")
	}
	if _, err := New(Options{}, Type{Name: "x"}, Type{Name: "x"}); err == nil {
		t.Fatal("a repeated name")
	}
}
