package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
)

// configCommands are the configuration commands: config show, detect, add
// and remove, enable and disable. None of them starts a server or runs a
// secret's command.
func configCommands(g *globals) []*cobra.Command {
	cfg := &cobra.Command{Use: "config", Short: "inspect the configuration (files, provenance, host imports)", Args: cobra.NoArgs}
	cfg.AddCommand(configShowCmd(g), configDetectCmd(g), configAddCmd(g), configRemoveCmd(g))
	return []*cobra.Command{cfg, toggleCmd(g, true), toggleCmd(g, false)}
}

// sources is where the configuration comes from, as a runtime would see it.
func (g *globals) sources() (config.Sources, error) {
	o, err := g.options()
	if err != nil {
		return config.Sources{}, err
	}
	return mcprt.ConfigSources(o), nil
}

func configShowCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "show", Short: "print the effective servers and, for each field, the file it came from (secrets masked)", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			src, err := g.sources()
			if err != nil {
				return err
			}
			eff, err := config.Load(src)
			if err != nil {
				return usage("%s", err.Error())
			}
			shown := config.Show(eff)
			if g.json {
				return g.printJSON(shown)
			}
			printShown(g.stdout, shown)
			return nil
		},
	}
}

func (g *globals) printJSON(v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return failed("cannot render JSON")
	}
	return nil
}

// compact renders a value as one line of JSON, without HTML escaping.
func compact(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// printShown renders config show's text form.
func printShown(w io.Writer, s config.Shown) {
	fmt.Fprintln(w, "Files (lowest precedence first):")
	for _, f := range s.Sources {
		mark, note := "✓", f.Scope
		if !f.Found {
			mark, note = "·", f.Scope+", not found"
		}
		fmt.Fprintf(w, "  %s %s (%s)\n", mark, orMemory(f.Path), note)
	}
	if len(s.Imports) > 0 {
		fmt.Fprintf(w, "Imports: %s\n", strings.Join(s.Imports, ", "))
	}
	fmt.Fprintf(w, "Servers (%d):\n", len(s.Servers))
	for _, srv := range s.Servers {
		state := "enabled"
		if srv.Disabled {
			state = "disabled"
		}
		fmt.Fprintf(w, "  %s (%s)\n", srv.Name, state)
		keys := srv.SortedFields()
		width := 0
		for _, k := range keys {
			width = max(width, len(k))
		}
		for _, k := range keys {
			fmt.Fprintf(w, "    %-*s  %s  ← %s\n", width, k, compact(srv.Config[k]), orMemory(srv.Sources[k]))
		}
		if srv.Problem != "" {
			fmt.Fprintf(w, "    cannot connect: %s\n", srv.Problem)
		}
		for _, l := range srv.Ignored {
			fmt.Fprintf(w, "    ignored: %s\n", oneLine(l))
		}
	}
	if len(s.Settings) > 0 {
		fmt.Fprintln(w, "Settings:")
		for _, k := range sortedKeys(s.Settings) {
			fmt.Fprintf(w, "  %s  %s  ← %s\n", k, compact(s.Settings[k]), orMemory(s.SettingsSources[k]))
		}
	}
	for _, part := range []struct {
		title string
		lines []string
	}{{"Issues", s.Issues}, {"Notices", s.Notices}} {
		if len(part.lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n", part.title)
		for _, l := range part.lines {
			fmt.Fprintln(w, "  "+oneLine(l))
		}
	}
}

func orMemory(p string) string {
	if p == "" {
		return "(in-memory)"
	}
	return p
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func configDetectCmd(g *globals) *cobra.Command {
	var write bool
	c := &cobra.Command{
		Use: "detect", Short: "list other hosts' MCP configurations and the servers each would add; --write adds them to imports", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			src, err := g.sources()
			if err != nil {
				return err
			}
			if src.Path != "" || src.Inline != nil {
				return usage("config detect looks at the standard files; it does not take --config, --url or --stdio")
			}
			reports, err := config.Detect(src)
			if err != nil {
				return usage("%s", err.Error())
			}
			var add []string
			for _, r := range reports {
				if !r.Imported && r.Adds() {
					add = append(add, r.Kind)
				}
			}
			if g.json && !write {
				return g.printJSON(map[string]any{"hosts": reports, "missingImports": orEmpty(add)})
			}
			if !g.json {
				printDetect(g.stdout, reports)
			}
			if !write {
				if len(add) > 0 && !g.json {
					fmt.Fprintf(g.stdout, "Run `runtime config detect --write` to add %s to the imports of %s.\n", strings.Join(add, ", "), config.AgentFile(src))
				}
				return nil
			}
			path := config.AgentFile(src)
			if len(add) == 0 {
				if g.json {
					return g.printJSON(map[string]any{"hosts": reports, "written": "", "added": []string{}})
				}
				fmt.Fprintln(g.stdout, "Nothing to write: every host that would add a server is imported already.")
				return nil
			}
			current, err := readIfExists(path)
			if err != nil {
				return failed(err.Error())
			}
			path, data, err := config.PlanImports(src, current, add)
			if err != nil {
				return failed(err.Error())
			}
			if err := writeFileAtomic(path, data); err != nil {
				return failed(err.Error())
			}
			if g.json {
				return g.printJSON(map[string]any{"hosts": reports, "written": path, "added": add})
			}
			fmt.Fprintf(g.stdout, "Added %s to the imports of %s.\n", strings.Join(add, ", "), path)
			return nil
		},
	}
	c.Flags().BoolVar(&write, "write", false, "add the hosts that would add servers to the imports of the agent-dir mcp.json (nothing else is written)")
	return c
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func printDetect(w io.Writer, reports []config.HostReport) {
	if len(reports) == 0 {
		fmt.Fprintln(w, "No other host's MCP configuration found.")
		return
	}
	for _, r := range reports {
		state := "not imported"
		if r.Imported {
			state = "imported"
		}
		fmt.Fprintf(w, "%s (%s):\n", r.Kind, state)
		for _, f := range r.Files {
			where := f.Path
			if f.Scope != "" {
				where += " [" + f.Scope + "]"
			}
			switch {
			case f.Problem != "":
				fmt.Fprintf(w, "  %s: %s\n", where, oneLine(f.Problem))
			default:
				fmt.Fprintf(w, "  %s: %s\n", where, describeServers(f))
			}
		}
	}
}

func describeServers(f config.HostFileReport) string {
	var parts []string
	if len(f.New) > 0 {
		parts = append(parts, "would add "+strings.Join(f.New, ", "))
	}
	if len(f.Present) > 0 {
		parts = append(parts, "already configured: "+strings.Join(f.Present, ", "))
	}
	for _, s := range f.Skipped {
		parts = append(parts, "would not import "+s.Name+" ("+oneLine(s.Reason)+")")
	}
	if len(parts) == 0 {
		return "no servers"
	}
	return strings.Join(parts, "; ")
}

func toggleCmd(g *globals, disable bool) *cobra.Command {
	verb, short := "enable", "enable a server through the project override .mcprt/mcp.json (only its disabled field)"
	if disable {
		verb, short = "disable", "disable a server in the project override .mcprt/mcp.json (only its disabled field)"
	}
	return &cobra.Command{
		Use: verb + " SERVER", Short: short, Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			src, err := g.sources()
			if err != nil {
				return err
			}
			path := config.OverridePath(src)
			current, err := readIfExists(path)
			if err != nil {
				return failed(err.Error())
			}
			path, data, err := config.PlanToggle(src, current, args[0], disable)
			switch {
			case errors.Is(err, config.ErrUnknownServer):
				return usage("no server named %q is configured", safeArg(args[0]))
			case err != nil:
				return usage("%s", err.Error())
			}
			if err := writeFileAtomic(path, data); err != nil {
				return failed(err.Error())
			}
			if g.json {
				return g.printJSON(map[string]any{"server": args[0], "disabled": disable, "file": path})
			}
			fmt.Fprintf(g.stdout, "%sd %s in %s (takes effect when the runtime next starts)\n", verb, args[0], path)
			return nil
		},
	}
}

// safeArg echoes a command-line server name only when it is a valid name.
func safeArg(s string) string {
	if config.ValidName(s) {
		return s
	}
	return "(an invalid name)"
}

func readIfExists(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil || st.IsDir() {
		return nil, fmt.Errorf("%s: cannot be read", path)
	}
	if st.Size() > config.MaxFileSize {
		return nil, fmt.Errorf("%s: larger than %d KiB", path, config.MaxFileSize>>10)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot be read", path)
	}
	return data, nil
}

// writeFileAtomic replaces path with data (mode 0600), through a temporary
// file in the same directory, so a reader never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: cannot create the directory", dir)
	}
	tmp, err := os.CreateTemp(dir, ".mcp-*.json")
	if err != nil {
		return fmt.Errorf("%s: cannot write in the directory", dir)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: cannot be written", path)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: cannot be written", path)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: cannot be written", path)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: cannot be replaced", path)
	}
	return nil
}
