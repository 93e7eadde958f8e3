package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/catalog"
	"github.com/mcprt/mcprt/config"
)

// BenchmarkStatusCold32 runs `runtime status` as a new process, the way a
// user or a shell prompt would, against 32 lazy servers whose metadata is
// in the cache (20 tools each): start, read the configuration and the cache,
// print every server as cached, exit. Nothing is connected. It reports the
// median and 99th-percentile wall time of one run, the median CPU time
// (user + system) of one run, which a loaded machine inflates less, and the
// median of `runtime --help` (process start alone) measured alternately.
// MCPRT_BENCH_BINARY names a binary to measure instead of this tree's:
//
//	go test ./internal/testonly/bench -run '^$' -bench StatusCold32 -benchtime 40x
func BenchmarkStatusCold32(b *testing.B) {
	dir := b.TempDir()
	bin := os.Getenv("MCPRT_BENCH_BINARY") // a binary built elsewhere, to compare commits
	if bin == "" {
		bin = filepath.Join(dir, "runtime")
		root, _ := filepath.Abs("../../..")
		if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "runtime")).CombinedOutput(); err != nil {
			b.Fatalf("build: %v\n%s", err, out)
		}
	}
	cfgPath, agent := statusFixture(b, dir)
	var cpu []time.Duration // user + system time of each status process
	run := func() string {
		cmd := exec.Command(bin, "status", "--config", cfgPath)
		cmd.Env = append(os.Environ(), "MCPRT_AGENT_DIR="+agent)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("runtime status: %v\n%s", err, out)
		}
		cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		return string(out)
	}
	if out := run(); strings.Count(out, "(20 tools, cached)") != 32 {
		b.Fatalf("not every server shows as cached:\n%s", out)
	}
	// The same binary printing its help: process start and package
	// initialisation alone, measured alternately as a baseline.
	help := func() {
		if out, err := exec.Command(bin, "--help").CombinedOutput(); err != nil {
			b.Fatalf("runtime --help: %v\n%s", err, out)
		}
	}
	times := make([]time.Duration, 0, b.N)
	base := make([]time.Duration, 0, b.N)
	cpu = cpu[:0]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		run()
		times = append(times, time.Since(start))
		start = time.Now()
		help()
		base = append(base, time.Since(start))
	}
	b.StopTimer()
	ms := func(d []time.Duration, q int) float64 {
		slices.Sort(d)
		return float64(d[len(d)*q/100].Microseconds()) / 1000
	}
	b.ReportMetric(ms(times, 50), "p50-ms")
	b.ReportMetric(ms(times, 99), "p99-ms")
	b.ReportMetric(ms(base, 50), "help-p50-ms")
	b.ReportMetric(ms(cpu, 50), "cpu-p50-ms")
}

// statusFixture writes a configuration of 32 lazy servers into dir and
// their metadata (20 tools each) into the cache of the agent directory it
// returns.
func statusFixture(b *testing.B, dir string) (cfgPath, agent string) {
	var sb strings.Builder
	sb.WriteString(`{"mcpServers":{`)
	for i := 0; i < 32; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `"srv%02d":{"command":"/nonexistent/server-%02d","args":["--flag"],"lifecycle":"lazy"}`, i, i)
	}
	sb.WriteString(`}}`)
	cfgPath = filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfgPath, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	eff, err := config.Load(config.Sources{Path: cfgPath})
	if err != nil {
		b.Fatal(err)
	}
	agent = filepath.Join(dir, "agent")
	cache := filepath.Join(agent, catalog.CacheFileName)
	for _, s := range eff.Servers {
		var tools []catalog.Tool
		for j := 0; j < 20; j++ {
			t := catalog.Tool{Name: fmt.Sprintf("tool_%02d", j), Description: "Does one thing to a resource of the server, with options.",
				InputSchema: []byte(`{"type":"object","properties":{"id":{"type":"string","description":"Which one"},"force":{"type":"boolean"}},"required":["id"]}`)}
			t.Fingerprint = catalog.Fingerprint(t)
			tools = append(tools, t)
		}
		if err := catalog.WriteCache(cache, s.Name, catalog.IdentityHash(s), catalog.Entry{Tools: tools, Instructions: "Use tool_00 first."}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	return cfgPath, agent
}

// BenchmarkStatusView32 is the status work of BenchmarkStatusCold32 alone,
// in a warm process: read the configuration and the cache
// (mcprt.OpenCacheView) and run the status mode.
func BenchmarkStatusView32(b *testing.B) {
	cfgPath, agent := statusFixture(b, b.TempDir())
	b.ReportAllocs()
	for b.Loop() {
		v, err := mcprt.OpenCacheView(mcprt.Options{ConfigPath: cfgPath, AgentDir: agent})
		if err != nil || v == nil {
			b.Fatalf("no cache view: %v", err)
		}
		if res, ok := v.Execute(context.Background(), json.RawMessage(`{}`)); !ok || strings.Count(res.Text, "(20 tools, cached)") != 32 {
			b.Fatalf("status: %v %s", ok, res.Text)
		}
	}
}
