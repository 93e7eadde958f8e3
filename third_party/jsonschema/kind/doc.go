// Package kind is github.com/santhosh-tekuri/jsonschema/v6/kind at v6.0.3,
// unchanged (see ../README.md).
package kind
