package catalog

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// OutputSchemas validates structuredContent against tools' output schemas
// (draft-07 or 2020-12, by their $schema; 2020-12 when unstamped). Compiled
// schemas are kept by the schema's fingerprint, so a tool's schema is
// compiled once however often it is called. Safe for concurrent use.
type OutputSchemas struct {
	once sync.Once
	// compiled maps a tool's fingerprint to its compiled schema (or its
	// compile error), the least recently used dropped past maxCompiled.
	// The cache is safe for concurrent use.
	compiled *lru.Cache[string, compiledSchema]
}

type compiledSchema struct {
	schema *jsonschema.Resolved
	err    error
}

// maxCompiled bounds the compiled-schema memo; past it the least recently
// used schema is dropped (and compiled again if its tool is called).
const maxCompiled = 1024

// ErrOutputSchema marks a result that does not satisfy its tool's output
// schema (or a tool whose output schema is unusable).
var ErrOutputSchema = errors.New("catalog: structured content does not match the output schema")

// Validate checks structured against schema. key identifies the schema
// (the tool's fingerprint); an empty key compiles without memo. The error
// wraps ErrOutputSchema and says, in one line of words, where the content
// failed and what was expected there.
func (o *OutputSchemas) Validate(key string, schema, structured json.RawMessage) error {
	sch, err := o.compile(key, schema)
	if err != nil {
		return fmt.Errorf("%w: the tool's output schema is not usable", ErrOutputSchema)
	}
	var inst any
	if err := json.Unmarshal(structured, &inst); err != nil {
		return fmt.Errorf("%w: structuredContent is not valid JSON", ErrOutputSchema)
	}
	if err := validateInstance(sch, inst); err != nil {
		return fmt.Errorf("%w: %s", ErrOutputSchema, describeFailure(sch.Schema(), inst, err))
	}
	return nil
}

func (o *OutputSchemas) compile(key string, schema json.RawMessage) (*jsonschema.Resolved, error) {
	if key == "" {
		return compileSchema(schema)
	}
	o.once.Do(func() { o.compiled, _ = lru.New[string, compiledSchema](maxCompiled) })
	c, ok := o.compiled.Get(key)
	if ok {
		return c.schema, c.err
	}
	if err := CheckSchemaSize(schema); err != nil {
		c.err = err
	} else {
		c.schema, c.err = compileSchema(schema)
	}
	o.compiled.Add(key, c)
	return c.schema, c.err
}
