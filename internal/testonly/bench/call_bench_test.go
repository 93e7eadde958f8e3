package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
)

func TestMain(m *testing.M) {
	testserver.MainIfRequested()
	os.Exit(m.Run())
}

// caller makes one echo tools/call.
type caller func(ctx context.Context) error

// blockSize is how many calls one block makes before switching clients.
const blockSize = 100

// measure runs n calls with callers goroutines and returns each call's
// latency and the block's wall time.
func measure(ctx context.Context, call caller, n, callers int) ([]time.Duration, time.Duration, error) {
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	var firstErr error
	var mu sync.Mutex
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	start := time.Now()
	for g := 0; g < callers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				if err := call(ctx); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start), firstErr
}

func pct(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// compare alternates blocks between the bare client and the runtime and
// reports, per alternation, the ratio runtime/bare of p50, p99 and
// throughput; the medians of those ratios are the benchmark's metrics.
func compare(b *testing.B, bare, rt caller, callers int) {
	ctx := context.Background()
	// Warm both up.
	for _, c := range []caller{bare, rt} {
		if _, _, err := measure(ctx, c, blockSize, callers); err != nil {
			b.Fatal(err)
		}
	}
	alternations := b.N / (2 * blockSize)
	if alternations < 1 {
		alternations = 1
	}
	var p50r, p99r, tputr, bareP50, rtP50, bareP99, rtP99, bareTput, rtTput []float64
	b.ResetTimer()
	for a := 0; a < alternations; a++ {
		order := []caller{bare, rt}
		if a%2 == 1 {
			order = []caller{rt, bare}
		}
		res := map[int][]time.Duration{}
		wall := map[int]time.Duration{}
		for i, c := range order {
			lat, w, err := measure(ctx, c, blockSize, callers)
			if err != nil {
				b.Fatal(err)
			}
			idx := i
			if a%2 == 1 {
				idx = 1 - i
			}
			res[idx], wall[idx] = lat, w
		}
		bp50, rp50 := pct(res[0], 0.5), pct(res[1], 0.5)
		bp99, rp99 := pct(res[0], 0.99), pct(res[1], 0.99)
		bt, rtp := float64(blockSize)/wall[0].Seconds(), float64(blockSize)/wall[1].Seconds()
		p50r = append(p50r, float64(rp50)/float64(bp50))
		p99r = append(p99r, float64(rp99)/float64(bp99))
		tputr = append(tputr, rtp/bt)
		bareP50, rtP50 = append(bareP50, float64(bp50.Microseconds())), append(rtP50, float64(rp50.Microseconds()))
		bareP99, rtP99 = append(bareP99, float64(bp99.Microseconds())), append(rtP99, float64(rp99.Microseconds()))
		bareTput, rtTput = append(bareTput, bt), append(rtTput, rtp)
	}
	b.StopTimer()
	b.ReportMetric(median(p50r), "p50-ratio")
	b.ReportMetric(median(p99r), "p99-ratio")
	b.ReportMetric(median(tputr), "tput-ratio")
	b.ReportMetric(median(bareP50), "bare-p50-µs")
	b.ReportMetric(median(rtP50), "rt-p50-µs")
	b.ReportMetric(median(bareP99), "bare-p99-µs")
	b.ReportMetric(median(rtP99), "rt-p99-µs")
	b.ReportMetric(median(bareTput), "bare-calls/s")
	b.ReportMetric(median(rtTput), "rt-calls/s")
	b.ReportMetric(float64(alternations), "alternations")
}

var echoArgs = map[string]any{"message": "benchmark"}

// bareClient connects mcp-go's client to a fresh test server pinned to the
// 2025-11-25 handshake, like the runtime's default.
func bareClient(b *testing.B, tr transport.Interface) caller {
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "bare", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		b.Fatal(err)
	}
	return func(ctx context.Context) error {
		r := mcp.CallToolRequest{}
		r.Params.Name = "echo"
		r.Params.Arguments = echoArgs
		res, err := c.CallTool(ctx, r)
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error")
		}
		return err
	}
}

// runtimeCaller starts the runtime with one server and calls through the
// mcp tool exactly as a model does.
func runtimeCaller(b *testing.B, srv config.Server) caller {
	rt, err := mcprt.Start(context.Background(), mcprt.Options{Config: &config.File{MCPServers: map[string]config.Server{"bench": srv}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close() })
	tool, _ := rt.Tool(mcprt.MCPToolName)
	args, _ := json.Marshal(map[string]any{"tool": "echo", "args": echoArgs})
	if r := tool.Execute(context.Background(), args); r.IsError {
		b.Fatal(r.Text)
	}
	return func(ctx context.Context) error {
		if r := tool.Execute(ctx, args); r.IsError {
			return fmt.Errorf("%s", r.Text)
		}
		return nil
	}
}

func stdioEnv() []string {
	var env []string
	for k, v := range testenv.TestServerEnv("--stdio") {
		env = append(env, k+"="+v)
	}
	return append(env, "PATH="+os.Getenv("PATH"))
}

// BenchmarkToolCall compares the runtime with a bare mcp-go client on the
// same Go server: go test ./internal/bench -run '^$' -bench ToolCall -benchtime 4000x
func BenchmarkToolCall(b *testing.B) {
	for _, callers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("stdio/callers=%d", callers), func(b *testing.B) {
			bare := bareClient(b, transport.NewStdio(testenv.Self(b), stdioEnv()))
			rt := runtimeCaller(b, config.Server{Command: testenv.Self(b), Env: testenv.TestServerEnv("--stdio")})
			compare(b, bare, rt, callers)
		})
		b.Run(fmt.Sprintf("http/callers=%d", callers), func(b *testing.B) {
			url, _ := testenv.StartTestServer(b, "--http 127.0.0.1:0")
			tr, err := transport.NewStreamableHTTP(url)
			if err != nil {
				b.Fatal(err)
			}
			bare := bareClient(b, tr)
			rt := runtimeCaller(b, config.Server{URL: url})
			compare(b, bare, rt, callers)
		})
	}
}
