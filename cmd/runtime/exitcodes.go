package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes: the contract every command keeps (docs/cli.md).
const (
	exitOK          = 0
	exitFailed      = 1   // a call or an operation failed
	exitUsage       = 2   // a usage or configuration error
	exitInterrupted = 130 // Ctrl-C (SIGINT), after the servers were stopped
	exitTerminated  = 143 // SIGTERM, after the servers were stopped
)

// interruptible returns a context cancelled by the first SIGINT or
// SIGTERM, a function telling whether that happened (and the exit code
// it calls for), and a function releasing the signals. A second signal
// while the command cleans up exits at once.
func interruptible() (ctx context.Context, interrupted func() (int, bool), stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var (
		mu   sync.Mutex
		code int
		done = make(chan struct{})
	)
	go func() {
		select {
		case s := <-sigs:
			mu.Lock()
			code = exitInterrupted
			if s == syscall.SIGTERM {
				code = exitTerminated
			}
			mu.Unlock()
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			os.Exit(code) // a second signal: stop waiting for the cleanup
		case <-done:
		}
	}()
	interrupted = func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		return code, code != 0
	}
	stop = func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
	return ctx, interrupted, stop
}

// strictGroups makes every command that only groups subcommands (the root,
// config, events, completion) refuse an unknown subcommand with exit 2 and
// a suggestion for a near miss, instead of printing its help and
// succeeding; given no subcommand at all, it prints its help on stderr and
// exits 2 as well.
func strictGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictGroups(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.SuggestionsMinimumDistance = 2
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			return usage("%s needs a command", cmd.CommandPath())
		}
		return unknownCommand(cmd, args[0])
	}
}

// unknownCommand is the error for a mistyped subcommand of cmd.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", safeWord(name), cmd.CommandPath())
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		quoted := make([]string, len(s))
		for i, n := range s {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		msg += " (did you mean " + strings.Join(quoted, " or ") + "?)"
	}
	return usage("%s; run '%s --help' for the commands", msg, cmd.CommandPath())
}

// safeWord echoes a command-line word only when it is short and printable.
func safeWord(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}
