package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Package initialisation is paid by every process, `runtime status` and
// every host embedding the runtime, before main runs: the binary's inits
// allocate under 1 MiB in all, none of ours and not the JSON Schema
// library (third_party/jsonschema compiles its meta-schemas on first use;
// upstream's init allocates 1.7 MB) more than 64 KiB.
func TestInitIsCheap(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary(t), "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("runtime --help: %v\n%s", err, out)
	}
	total, seen := 0, 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		// init PKG @0.5 ms, 0.01 ms clock, 1024 bytes, 3 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[10] != "allocs" {
			continue
		}
		bytes, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("cannot read %q", sc.Text())
		}
		seen++
		total += bytes
		if pkg := f[1]; (strings.HasPrefix(pkg, "github.com/mcprt/") || strings.HasPrefix(pkg, "github.com/santhosh-tekuri/jsonschema")) && bytes > 64<<10 {
			t.Errorf("init of %s allocates %d bytes", pkg, bytes)
		}
	}
	if seen < 50 || total > 1<<20 {
		t.Fatalf("%d package inits allocate %d bytes in all, want under 1 MiB", seen, total)
	}
}
