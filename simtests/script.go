package simtests

import (
	"errors"
	"fmt"
	"strings"
)

// A scenario file is a sequence of commands, each followed by a line
// "----" and the trace lines the command must produce, up to a blank line
// (raft's data-driven style). Lines starting with '#' and blank lines
// between commands are comments. The command language is documented in
// docs/simulation.md; the handlers are in commands.go.

// block is one command of a scenario file with what precedes it.
type block struct {
	pre      []string // comment and blank lines before the command, verbatim
	line     int      // 1-based line number of the command
	cmd      string
	expected []string
}

// script is a parsed scenario file.
type script struct {
	blocks []block
	tail   []string // comment lines after the last command
}

// parseScript reads a scenario file.
func parseScript(text string) (*script, error) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	s := &script{}
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		b := block{pre: pre, line: i + 1, cmd: strings.TrimSpace(l)}
		pre = nil
		if i+1 >= len(lines) || lines[i+1] != "----" {
			return nil, fmt.Errorf("line %d: %q is not followed by a line \"----\"", i+1, l)
		}
		i += 2
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			b.expected = append(b.expected, lines[i])
		}
		s.blocks = append(s.blocks, b)
	}
	s.tail = pre
	if len(s.blocks) == 0 {
		return nil, errors.New("no commands")
	}
	return s, nil
}

// render writes the script back with the given outputs as expected traces.
func (s *script) render(outputs [][]string) string {
	var b strings.Builder
	for i, bl := range s.blocks {
		for _, l := range bl.pre {
			b.WriteString(l + "\n")
		}
		b.WriteString(bl.cmd + "\n----\n")
		out := bl.expected
		if i < len(outputs) {
			out = outputs[i]
		}
		for _, l := range out {
			b.WriteString(l + "\n")
		}
		if i < len(s.blocks)-1 || len(s.tail) > 0 {
			b.WriteString("\n")
		}
	}
	for _, l := range s.tail {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// runner executes a scenario against a world.
type runner struct {
	w          *World
	fixedSeed  bool // the seed was chosen from outside; "seed" is ignored
	n          int  // host operations started, for automatic ids
	started    bool
	closeStart bool
	held       bool            // "hold": async commands start without anything running
	reserved   map[string]bool // ids the script names itself
}

// runScript runs every command of s in w (inside a synctest bubble) and
// returns each command's trace. After the last command it closes the
// runtime if the script did not, and reports any broken invariant.
func runScript(w *World, s *script, fixedSeed bool) ([][]string, error) {
	r := &runner{w: w, fixedSeed: fixedSeed, reserved: map[string]bool{"close": true}}
	for _, b := range s.blocks {
		if name, rest, _ := strings.Cut(b.cmd, " "); strings.HasSuffix(name, "-async") {
			id, _ := cut(rest)
			r.reserved[id] = true
		}
	}
	var outputs [][]string
	_, mark := w.Lines(0)
	for _, b := range s.blocks {
		err := r.exec(b.cmd)
		var out []string
		out, mark = w.Lines(mark)
		outputs = append(outputs, out)
		if err == nil {
			err = w.Err()
		}
		if err != nil {
			return outputs, fmt.Errorf("line %d: %s: %w", b.line, b.cmd, err)
		}
	}
	if r.started && !r.closeStart {
		if err := r.exec("shutdown"); err != nil {
			return outputs, fmt.Errorf("final shutdown: %w", err)
		}
	}
	return outputs, w.Err()
}

// exec runs one command line.
func (r *runner) exec(line string) error {
	name, rest, _ := strings.Cut(line, " ")
	cmd, ok := commands[name]
	if !ok {
		return fmt.Errorf("unknown command %q (see docs/simulation.md)", name)
	}
	if needs := cmd.phase; needs != 0 {
		switch {
		case needs == before && r.started:
			return fmt.Errorf("%s must come before start", name)
		case needs == after && !r.started:
			return fmt.Errorf("%s needs start first", name)
		}
	}
	return cmd.run(r, strings.TrimSpace(rest))
}

// id returns an automatic id for a host operation, skipping ids the
// script used itself.
func (r *runner) id(prefix string) string {
	for {
		r.n++
		if id := fmt.Sprintf("%s%d", prefix, r.n); !r.reserved[id] && r.w.Host.Op(id) == nil {
			return id
		}
	}
}
