package simtests

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"unsafe"
)

var rewrite = flag.Bool("rewrite", false, "TestScenarios: write each command's actual trace into testdata/*.txt")

// scenarioSeeds are the seeded interleavings every scenario also runs
// under (after its FIFO run, whose trace is the expected output): their
// traces are not compared with the file, but every invariant must hold and
// each must replay byte for byte.
var scenarioSeeds = []uint64{1, 2, 3}

// runScenario runs a parsed scenario in its own bubble with the given seed
// (0: FIFO, the expected output's order).
func runScenario(t *testing.T, s *script, seed uint64, yield bool) (outputs [][]string, trace string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.Join(err, fmt.Errorf("panic: %v", p))
		}
	}()
	synctest.Test(t, func(t *testing.T) {
		var anchor byte // the bottom of the simulation goroutine's stack (gate.go)
		w := NewWorld(seed)
		w.Disp.Pin(uintptr(unsafe.Pointer(&anchor)))
		w.Disp.Yield = yield
		outputs, err = runScript(w, s, seed != 0)
		if err != nil {
			if derr := w.Drain(); derr != nil {
				err = errors.Join(err, fmt.Errorf("while draining: %w", derr))
			}
		}
		if err == nil && w.Disp.Hazards() > 0 {
			err = fmt.Errorf("%d activation(s) scheduled by a host goroutine during an activation", w.Disp.Hazards())
		}
		if err == nil && w.Disp.StackMoved() > 0 {
			err = fmt.Errorf("the simulation goroutine's stack moved (%d posts from off its pinned stack): raise stackReserve in gate.go", w.Disp.StackMoved())
		}
		trace = w.Trace()
		endBubble()
	})
	return outputs, trace, err
}

// TestScenarios walks testdata/*.txt: each file runs in FIFO order and
// every command's trace must match the file (-rewrite regenerates them);
// then it runs under a few seeds, where every invariant must hold and the
// trace must replay byte for byte. With -seed=N, that seed is used instead.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	seeds := scenarioSeeds
	if *seedFlag != 0 {
		seeds = []uint64{*seedFlag}
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := parseScript(string(text))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			outputs, trace, err := runScenario(t, s, 0, false)
			if err != nil {
				t.Fatalf("%s: %v\n%s", file, err, tail(trace, 40))
			}
			if *rewrite {
				if err := os.WriteFile(file, []byte(s.render(outputs)), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				for i, b := range s.blocks {
					got, want := strings.Join(outputs[i], "\n"), strings.Join(b.expected, "\n")
					if got != want {
						t.Errorf("%s:%d: %s\n--- want\n%s\n--- got\n%s\n(go test ./simtests -run 'TestScenarios/%s$' -rewrite regenerates the file; review the diff)",
							file, b.line, b.cmd, want, got, name)
					}
				}
			}
			for _, seed := range seeds {
				_, first, err := runScenario(t, s, seed, false)
				repro := fmt.Sprintf("go test ./simtests -run 'TestScenarios/%s$' -seed=%d -v", name, seed)
				if err != nil {
					t.Fatalf("%s with seed %d: %v\n%s\nreproduce with: %s", file, seed, err, tail(first, 40), repro)
				}
				_, second, _ := runScenario(t, s, seed, *yieldFlag)
				if first != second {
					t.Fatalf("%s with seed %d: the two runs' traces differ at %s\nreproduce with: %s", file, seed, firstDiff(first, second), repro)
				}
				if *seedFlag != 0 && testing.Verbose() {
					t.Log("\n" + first)
				}
			}
		})
	}
	t.Logf("%d scenario files run in FIFO order against their expected traces, then under seeds %v, each twice", len(files), seeds)
}
