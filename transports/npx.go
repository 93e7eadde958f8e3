package transports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// npx resolution: a stdio server configured as `npx [-y] <package>@<version>
// [args...]` runs through npm's npx, which keeps an npm process (about
// 90 MiB and 0.7 s, see docs/performance.md) alive as the server's parent.
// When the package is already in npm's npx cache at exactly the requested
// version, the runtime runs the package's bin with node directly instead.
// Anything it is not sure about (a range or tag instead of an exact version,
// several candidate bins, npx options it does not know, a missing node)
// falls back to npx.

// exactVersion is an exact semver version (no range, no tag).
var exactVersion = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// resolveNpx returns the node command and arguments that run the same
// server as `npx args...`, or ok false to run npx itself. env is the
// child's environment (npm_config_cache or HOME locate the npx cache; PATH
// locates node).
func resolveNpx(command string, args, env []string) (string, []string, bool) {
	if filepath.Base(command) != "npx" {
		return "", nil, false
	}
	i := 0
options:
	for ; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-y" || a == "--yes" || a == "-q" || a == "--quiet":
		case a == "--":
			i++
			break options
		case strings.HasPrefix(a, "-"):
			return "", nil, false // an npx option we do not interpret (e.g. --package, -c)
		default:
			break options
		}
	}
	if i >= len(args) {
		return "", nil, false
	}
	name, version, ok := splitSpec(args[i])
	if !ok || !exactVersion.MatchString(version) {
		return "", nil, false
	}
	bin, ok := cachedBin(npxCacheDir(env), name, version)
	if !ok {
		return "", nil, false
	}
	node, err := lookPath("node", "", env)
	if err != nil {
		return "", nil, false
	}
	return node, append([]string{bin}, args[i+1:]...), true
}

// splitSpec splits "name@version" and "@scope/name@version".
func splitSpec(spec string) (name, version string, ok bool) {
	at := strings.LastIndex(spec, "@")
	if at <= 0 {
		return "", "", false
	}
	return spec[:at], spec[at+1:], true
}

// npxCacheDir is npm's cache directory as the child would see it.
func npxCacheDir(env []string) string {
	get := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	if c := get("npm_config_cache"); c != "" {
		return c
	}
	if h := get("HOME"); h != "" {
		return filepath.Join(h, ".npm")
	}
	return ""
}

// cachedBin finds name@version in the npx cache (<cache>/_npx/*/node_modules)
// and returns its bin script.
func cachedBin(cache, name, version string) (string, bool) {
	if cache == "" {
		return "", false
	}
	dirs, err := filepath.Glob(filepath.Join(cache, "_npx", "*", "node_modules", filepath.FromSlash(name), "package.json"))
	if err != nil {
		return "", false
	}
	sort.Strings(dirs)
	for _, manifest := range dirs {
		data, err := os.ReadFile(manifest)
		if err != nil {
			continue
		}
		var pkg struct {
			Name    string          `json:"name"`
			Version string          `json:"version"`
			Bin     json.RawMessage `json:"bin"`
		}
		if json.Unmarshal(data, &pkg) != nil || pkg.Name != name || pkg.Version != version {
			continue
		}
		rel, ok := pickBin(name, pkg.Bin)
		if !ok {
			return "", false
		}
		bin := filepath.Join(filepath.Dir(manifest), filepath.FromSlash(rel))
		if st, err := os.Stat(bin); err == nil && !st.IsDir() {
			return bin, true
		}
	}
	return "", false
}

// pickBin chooses the bin npx would run: the only one, or the one named
// like the package (without its scope).
func pickBin(name string, raw json.RawMessage) (string, bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return one, true
	}
	var bins map[string]string
	if json.Unmarshal(raw, &bins) != nil || len(bins) == 0 {
		return "", false
	}
	if len(bins) == 1 {
		for _, b := range bins {
			return b, true
		}
	}
	short := name[strings.LastIndex(name, "/")+1:]
	b, ok := bins[short]
	return b, ok
}
