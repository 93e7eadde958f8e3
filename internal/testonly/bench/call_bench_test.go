package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
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

// compare alternates blocks between the bare client and the runtime, both
// against the same server process, and reports for each side the p50 and
// p99 of every call's latency pooled over all blocks (b.N/2 samples each:
// at least 1,000 with -benchtime 2000x or more) and its throughput (calls
// over the summed wall time of its blocks), and the ratios runtime/bare of
// those. The bare client goes first in even alternations, the runtime in
// odd ones, so that drift in the machine's speed falls on both. It also
// reports the process's CPU time per call on each side, and the paired
// medians of the per-alternation ratios.
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
	var lat [2][]time.Duration
	var wall, cpu [2]time.Duration
	var pairP50, pairTput []float64 // per alternation, runtime/bare
	b.ResetTimer()
	for a := 0; a < alternations; a++ {
		var blk [2][]time.Duration
		var blkWall [2]time.Duration
		for i := 0; i < 2; i++ {
			side := i ^ a%2 // 0: bare, 1: runtime
			c0 := processCPU()
			l, w, err := measure(ctx, []caller{bare, rt}[side], blockSize, callers)
			if err != nil {
				b.Fatal(err)
			}
			lat[side], wall[side], cpu[side] = append(lat[side], l...), wall[side]+w, cpu[side]+processCPU()-c0
			blk[side], blkWall[side] = l, w
		}
		pairP50 = append(pairP50, float64(pct(blk[1], 0.5))/float64(pct(blk[0], 0.5)))
		pairTput = append(pairTput, float64(blkWall[0])/float64(blkWall[1]))
	}
	b.StopTimer()
	n := float64(alternations * blockSize)
	bp50, rp50 := pct(lat[0], 0.5), pct(lat[1], 0.5)
	bp99, rp99 := pct(lat[0], 0.99), pct(lat[1], 0.99)
	bt, rtp := n/wall[0].Seconds(), n/wall[1].Seconds()
	b.ReportMetric(float64(rp50)/float64(bp50), "p50-ratio")
	b.ReportMetric(float64(rp99)/float64(bp99), "p99-ratio")
	b.ReportMetric(rtp/bt, "tput-ratio")
	b.ReportMetric(float64(bp50.Microseconds()), "bare-p50-µs")
	b.ReportMetric(float64(rp50.Microseconds()), "rt-p50-µs")
	b.ReportMetric(float64(bp99.Microseconds()), "bare-p99-µs")
	b.ReportMetric(float64(rp99.Microseconds()), "rt-p99-µs")
	b.ReportMetric(bt, "bare-calls/s")
	b.ReportMetric(rtp, "rt-calls/s")
	b.ReportMetric(float64(cpu[0].Microseconds())/n, "bare-cpu-µs/call")
	b.ReportMetric(float64(cpu[1].Microseconds())/n, "rt-cpu-µs/call")
	// The same ratios taken per alternation (two blocks of 100 calls a few
	// milliseconds apart), median over alternations: less moved by the
	// load of other processes changing during the run.
	b.ReportMetric(median(pairP50), "paired-p50-ratio")
	b.ReportMetric(median(pairTput), "paired-tput-ratio")
	b.ReportMetric(n, "samples")
}

var echoArgs = map[string]any{"message": "benchmark"}

// echoText is what the test server's echo tool answers to echoArgs.
const echoText = "echo: benchmark"

// pooledHTTP is the bare client's HTTP client: the same pool as the
// runtime's (transports keeps up to 64 idle connections per host; Go's
// default of 2 would make the bare client dial anew in every burst).
func pooledHTTP() *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: base}
}

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
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) != 1 {
			return fmt.Errorf("bare client: unexpected result %+v", res)
		}
		if tc, ok := res.Content[0].(mcp.TextContent); !ok || tc.Text != echoText {
			return fmt.Errorf("bare client: unexpected result %+v", res.Content[0])
		}
		return nil
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
	if r := tool.Execute(context.Background(), args); r.IsError || r.Text != echoText {
		b.Fatalf("runtime: unexpected result %+v", r)
	}
	return func(ctx context.Context) error {
		if r := tool.Execute(ctx, args); r.IsError || r.Text != echoText {
			return fmt.Errorf("runtime: unexpected result %+v", r)
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
// same Go server: go test ./internal/testonly/bench -run '^$' -bench ToolCall -benchtime 8000x
func BenchmarkToolCall(b *testing.B) {
	for _, callers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("stdio/callers=%d", callers), func(b *testing.B) {
			bare := bareClient(b, transport.NewStdio(testenv.Self(b), stdioEnv()))
			rt := runtimeCaller(b, config.Server{Command: testenv.Self(b), Env: testenv.TestServerEnv("--stdio")})
			compare(b, bare, rt, callers)
		})
		b.Run(fmt.Sprintf("http/callers=%d", callers), func(b *testing.B) {
			url, _ := testenv.StartTestServer(b, "--http 127.0.0.1:0")
			tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(pooledHTTP()))
			if err != nil {
				b.Fatal(err)
			}
			bare := bareClient(b, tr)
			rt := runtimeCaller(b, config.Server{URL: url})
			compare(b, bare, rt, callers)
		})
		// The same, with the bare client also keeping the standalone GET
		// stream open (mcp-go's continuous listening), as the runtime does
		// on every Streamable HTTP connection (issue 16 item 6): what is
		// left is the cost of the runtime's call path alone.
		b.Run(fmt.Sprintf("http-get/callers=%d", callers), func(b *testing.B) {
			url, _ := testenv.StartTestServer(b, "--http 127.0.0.1:0")
			tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(pooledHTTP()), transport.WithContinuousListening(),
				transport.WithHTTPLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				b.Fatal(err)
			}
			bare := bareClient(b, tr)
			rt := runtimeCaller(b, config.Server{URL: url})
			compare(b, bare, rt, callers)
		})
	}
}
