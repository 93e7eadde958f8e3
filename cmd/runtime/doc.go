// Command runtime is mcprt's demo CLI: wiring only. It parses flags, builds
// Options (the real clock, transports and dispatcher), runs one command and
// maps outcomes to exit codes: 0 success, 1 a failed call (a tool error, an
// unreachable or failing server), 2 a usage or configuration error. Errors
// are one line on stderr and name the server. Human output escapes every
// character a terminal would act on (termescape.go); --json is exact.
//
// Concurrency contract: main owns the process; commands run on its
// goroutine, and a SIGINT or SIGTERM cancels the command's context, after
// which the runtime is closed (children reaped) before exiting.
package main
