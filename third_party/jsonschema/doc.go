// Package jsonschema is github.com/santhosh-tekuri/jsonschema/v6 at v6.0.3,
// with one mcprt patch: the meta-schemas are compiled on the first Compile
// instead of in init. See README.md here and docs/dependencies.md.
package jsonschema
