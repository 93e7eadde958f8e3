package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"
)

// The JSON Schema library is github.com/google/jsonschema-go, the one the
// official Go SDK for MCP uses (docs/dependencies.md): draft-07 and 2020-12,
// and an init that costs nothing measurable, where the library used before
// compiled every draft's meta-schemas in its init (10 ms in every process).
// It does not validate a schema against its meta-schema; schemaTypes and
// the typed decoding of every keyword catch what a model provider would
// refuse.

// errRemoteRef refuses every external reference: a server's schema never
// makes the runtime read a file or fetch a URL.
var errRemoteRef = errors.New("external schema references are not loaded")

// jsonTypes are the type names a schema may use.
var jsonTypes = map[string]bool{
	"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true,
}

// compileSchema decodes and resolves a schema as its $schema says (2020-12
// when it says nothing), with external references refused. A library panic
// on a hostile schema is an error, never the host's crash.
func compileSchema(raw json.RawMessage) (rs *jsonschema.Resolved, err error) {
	defer func() {
		if r := recover(); r != nil {
			rs, err = nil, errors.New("the schema could not be compiled")
		}
	}()
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	switch dialectOf(s.Schema) {
	case dialectMisc:
		return nil, errors.New("unsupported dialect")
	case dialect07:
		s.Schema = "http://json-schema.org/draft-07/schema#"
	case Dialect2020:
		s.Schema = Dialect2020
	}
	bad := false
	walkSchemas(&s, func(n *jsonschema.Schema) {
		if n.Type != "" && !jsonTypes[n.Type] {
			bad = true
		}
		for _, t := range n.Types {
			if !jsonTypes[t] {
				bad = true
			}
		}
	})
	if bad {
		return nil, errors.New("unknown type name")
	}
	return s.Resolve(&jsonschema.ResolveOptions{
		Loader: func(*url.URL) (*jsonschema.Schema, error) { return nil, errRemoteRef },
	})
}

// validateInstance validates one decoded JSON value, turning a library
// panic into an error.
func validateInstance(rs *jsonschema.Resolved, inst any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the validator failed")
		}
	}()
	return rs.Validate(inst)
}

// walkSchemas calls f on s and every subschema below it.
func walkSchemas(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	f(s)
	for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.Definitions, s.Properties, s.PatternProperties, s.DependentSchemas, s.DependencySchemas} {
		for _, c := range m {
			walkSchemas(c, f)
		}
	}
	for _, l := range [][]*jsonschema.Schema{s.PrefixItems, s.ItemsArray, s.AllOf, s.AnyOf, s.OneOf} {
		for _, c := range l {
			walkSchemas(c, f)
		}
	}
	for _, c := range []*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems, s.AdditionalProperties,
		s.PropertyNames, s.UnevaluatedProperties, s.Not, s.If, s.Then, s.Else, s.ContentSchema} {
		walkSchemas(c, f)
	}
}
