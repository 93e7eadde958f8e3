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
// allocate under 1 MiB in all and none of ours more than 64 KiB. (The
// JSON Schema library whose init compiled every draft's meta-schemas,
// 1.7 MB, is no longer linked: TestRuntimeLinksNoJSONSchemaInit.)
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
		pkg := f[1]
		total += bytes
		if strings.HasPrefix(pkg, "github.com/mcprt/") && bytes > 64<<10 {
			t.Errorf("init of %s allocates %d bytes", pkg, bytes)
		}
	}
	if seen < 50 || total > 1<<20 {
		t.Fatalf("%d package inits allocate %d bytes in all, want under 1 MiB", seen, total)
	}
}
