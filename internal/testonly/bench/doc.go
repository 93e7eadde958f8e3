// Package bench holds the tool-call benchmark that compares the runtime
// with a bare mcp-go client (see docs/performance.md). It has no code of its
// own outside its _test.go files.
//
// Concurrency contract: none; the benchmark owns the goroutines it starts
// for concurrent callers and waits for them before it returns.
package bench
