package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/yosida95/uritemplate/v3"
)

// Seed 003's resource limits. A listing that breaks one of them (or lists
// one URI or template twice) fails that server's resource catalog only.
const (
	// MaxResourceText bounds a resource's or template's URI, name, title
	// and description.
	MaxResourceText = 16 << 10
	// MaxMimeBytes bounds a MIME type and a template variable's name.
	MaxMimeBytes = 256
	// MaxTemplateVars bounds a template's unique variables.
	MaxTemplateVars = 100
	// MaxReadItems bounds the items one resources/read shows.
	MaxReadItems = 100
	// MaxReadBytes bounds one resources/read result.
	MaxReadBytes = 16 << 20
)

// HasUserinfo reports whether a URI carries user information
// (scheme://user:password@host/...). Such URIs are refused and never shown:
// they usually hold a credential.
func HasUserinfo(uri string) bool {
	u, err := url.Parse(uri)
	if err == nil {
		return u.User != nil
	}
	// Not parseable: look for an authority with '@' before its end.
	if _, rest, ok := strings.Cut(uri, "://"); ok {
		auth, _, _ := strings.Cut(rest, "/")
		return strings.Contains(auth, "@")
	}
	return false
}

// resourceMeta is what the resource rules check of a resource or a
// template.
type resourceMeta struct {
	URI         string          `json:"uri"`
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	MimeType    string          `json:"mimeType"`
	Annotations json.RawMessage `json:"annotations"`
	Meta        json.RawMessage `json:"_meta"`
}

func checkResourceMeta(kind string, i int, m resourceMeta) error {
	for _, f := range []string{m.URI, m.URITemplate, m.Name, m.Title, m.Description} {
		if len(f) > MaxResourceText {
			return fmt.Errorf("%s %d has a field over 16 KiB", kind, i+1)
		}
	}
	if len(m.MimeType) > MaxMimeBytes {
		return fmt.Errorf("%s %d has a MIME type over 256 bytes", kind, i+1)
	}
	if len(m.Annotations) > 0 {
		var a struct {
			Audience []any `json:"audience"`
		}
		if json.Unmarshal(m.Annotations, &a) != nil || len(a.Audience) > 2 {
			return fmt.Errorf("%s %d has malformed annotations (at most two audience hints)", kind, i+1)
		}
	}
	return nil
}

// AdmitResources decodes resources/list and resources/templates/list
// results under the resource rules. A resource or template whose URI holds
// user information is left out (counted in dropped; never shown). Any
// other broken entry, or a URI or template listed twice, fails the whole
// resource catalog with an error quoting no server content.
func AdmitResources(resources, templates []json.RawMessage) (rs []Resource, ts []ResourceTemplate, dropped int, err error) {
	seen := map[string]bool{}
	for i, raw := range resources {
		var m resourceMeta
		if json.Unmarshal(raw, &m) != nil || m.URI == "" {
			return nil, nil, 0, fmt.Errorf("resource %d is not a JSON object with a uri", i+1)
		}
		if err := checkResourceMeta("resource", i, m); err != nil {
			return nil, nil, 0, err
		}
		if HasUserinfo(m.URI) {
			dropped++
			continue
		}
		if seen[m.URI] {
			return nil, nil, 0, fmt.Errorf("resource %d repeats the URI of an earlier resource", i+1)
		}
		seen[m.URI] = true
		r := Resource{URI: m.URI, Name: CleanText(m.Name), Title: CleanText(m.Title), Description: CleanText(m.Description), MimeType: CleanText(m.MimeType), Meta: MetaObject(m.Meta)}
		if r.Name == "" {
			r.Name = r.URI
		}
		rs = append(rs, r)
	}
	seenT := map[string]bool{}
	for i, raw := range templates {
		var m resourceMeta
		if json.Unmarshal(raw, &m) != nil || m.URITemplate == "" {
			return nil, nil, 0, fmt.Errorf("resource template %d is not a JSON object with a uriTemplate", i+1)
		}
		if err := checkResourceMeta("resource template", i, m); err != nil {
			return nil, nil, 0, err
		}
		t, err := uritemplate.New(m.URITemplate)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("resource template %d is not an RFC 6570 template", i+1)
		}
		vars := t.Varnames()
		if len(vars) > MaxTemplateVars {
			return nil, nil, 0, fmt.Errorf("resource template %d has %d variables, more than %d", i+1, len(vars), MaxTemplateVars)
		}
		for _, v := range vars {
			if len(v) > MaxMimeBytes {
				return nil, nil, 0, fmt.Errorf("resource template %d has a variable name over 256 bytes", i+1)
			}
		}
		if HasUserinfo(m.URITemplate) {
			dropped++
			continue
		}
		if seenT[m.URITemplate] {
			return nil, nil, 0, fmt.Errorf("resource template %d repeats an earlier template", i+1)
		}
		seenT[m.URITemplate] = true
		rt := ResourceTemplate{URITemplate: m.URITemplate, Name: CleanText(m.Name), Title: CleanText(m.Title), Description: CleanText(m.Description), MimeType: CleanText(m.MimeType), Meta: MetaObject(m.Meta)}
		if rt.Name == "" {
			rt.Name = rt.URITemplate
		}
		ts = append(ts, rt)
	}
	return rs, ts, dropped, nil
}

// ResourceToolNames returns the read_ tool name of each of a server's
// resources, unique within the server and apart from taken (its tools'
// names): read_<name> as ResourceToolName makes it for the first resource
// that wants it, in listing order; every later one that would repeat a name
// gets "_" and the first 6 hex digits of the SHA-256 of its URI (cut to fit
// MaxToolName), and, should that still repeat, of its URI and its position.
func ResourceToolNames(resources []Resource, taken map[string]bool) []string {
	used := map[string]bool{}
	for k := range taken {
		used[k] = true
	}
	out := make([]string, len(resources))
	for i, r := range resources {
		name := ResourceToolName(r.Name)
		for attempt := 0; used[name]; attempt++ {
			seed := r.URI
			if attempt > 0 {
				seed = fmt.Sprintf("%s\x00%d", r.URI, i+attempt)
			}
			sum := sha256.Sum256([]byte(seed))
			suffix := "_" + hex.EncodeToString(sum[:])[:6]
			base := ResourceToolName(r.Name)
			if len(base)+len(suffix) > MaxToolName {
				base = base[:MaxToolName-len(suffix)]
			}
			name = base + suffix
		}
		used[name] = true
		out[i] = name
	}
	return out
}

// ExpandTemplate expands an RFC 6570 (level 4) template with arguments: a
// string, number or boolean is a value, an array of them a list, an object
// of them an associative array. The arguments are bounded by
// MaxArgumentBytes; an expansion whose URI holds user information is
// refused.
func ExpandTemplate(template string, args map[string]any) (string, error) {
	t, err := uritemplate.New(template)
	if err != nil {
		return "", fmt.Errorf("not an RFC 6570 template")
	}
	if b, _ := json.Marshal(args); len(b) > MaxArgumentBytes {
		return "", fmt.Errorf("the template's arguments are %d bytes, more than %d (256 KiB)", len(b), MaxArgumentBytes)
	}
	vals := uritemplate.Values{}
	for k, v := range args {
		switch x := v.(type) {
		case []any:
			list := make([]string, len(x))
			for i, e := range x {
				list[i] = scalar(e)
			}
			vals.Set(k, uritemplate.List(list...))
		case map[string]any:
			keys := make([]string, 0, len(x))
			for kk := range x {
				keys = append(keys, kk)
			}
			sort.Strings(keys)
			var kv []string
			for _, kk := range keys {
				kv = append(kv, kk, scalar(x[kk]))
			}
			vals.Set(k, uritemplate.KV(kv...))
		default:
			vals.Set(k, uritemplate.String(scalar(v)))
		}
	}
	uri, err := t.Expand(vals)
	if err != nil {
		return "", fmt.Errorf("the template cannot be expanded with these arguments")
	}
	if HasUserinfo(uri) {
		return "", fmt.Errorf("the expanded URI holds user information, which is refused")
	}
	return uri, nil
}

// TemplateVars returns a template's variable names (nil when it does not
// parse).
func TemplateVars(template string) []string {
	t, err := uritemplate.New(template)
	if err != nil {
		return nil
	}
	return t.Varnames()
}

func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
