package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// installProgress draws "installing PKG with npm... 40 s" on a terminal
// while a server's package installs (transports: an npx package's first
// use), redrawing the line each second, until the install is done. Off a
// terminal, or with NO_COLOR set, the notice is one plain line instead.
type installProgress struct {
	mu   sync.Mutex
	stop chan struct{} // nil when nothing is drawn
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	if t, ok := w.(*termWriter); ok {
		w = t.w // the escaping writer in front of stdout or stderr
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// drawsProgress tells whether progress lines are drawn on w.
func drawsProgress(w io.Writer) bool { return isTerminal(w) && os.Getenv("NO_COLOR") == "" }

// redraw writes the CLI's own line-redraw sequence ("\r\x1b[K") past the
// escaping writer, followed by text, which is escaped.
func redraw(w io.Writer, text string) {
	if t, ok := w.(*termWriter); ok {
		_ = t.flush()
		w = t.w
	}
	fmt.Fprint(w, "\r\x1b[K"+escapeTerminal(text))
}

// notice handles the install notices; it reports whether it printed n.
func (p *installProgress) notice(w io.Writer, server, text string) bool {
	if p == nil {
		return false
	}
	switch {
	case strings.HasPrefix(text, "installing "):
		what, _, _ := strings.Cut(text, " (")
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.stop != nil {
			return true
		}
		stop := make(chan struct{})
		p.stop = stop
		start := time.Now()
		fmt.Fprintf(w, "runtime: %s: %s", server, oneLine(text))
		go func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					p.mu.Lock()
					if p.stop == stop {
						redraw(w, fmt.Sprintf("runtime: %s: %s... %d s", server, oneLine(what), int(time.Since(start).Seconds())))
					}
					p.mu.Unlock()
				}
			}
		}()
		return true
	case strings.HasPrefix(text, "installed "), strings.HasPrefix(text, "install of "):
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.stop != nil {
			close(p.stop)
			p.stop = nil
			redraw(w, fmt.Sprintf("runtime: %s: %s\n", server, oneLine(text)))
			return true
		}
	}
	return false
}
