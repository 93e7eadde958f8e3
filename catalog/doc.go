// Package catalog owns server metadata as plain values and pure functions:
// the metadata model (tools with fingerprints, resources, resource
// templates, prompts, instructions), the on-disk metadata cache and its
// invalidation by identity hash, the catalog limits, search ranking (BM25
// with name boosts and the coverage rule), input-schema compatibility and
// output-schema validation, and the naming and filtering of direct tools.
//
// Concurrency contract: no goroutines, channels or clocks; callers pass
// "now". Values are owned by their caller; an Index and an OutputSchemas are
// safe for concurrent use. The cache file is written atomically (a temporary
// file renamed over it, under an exclusive file lock, re-reading and merging
// per server), so concurrent runtimes, in one process or several, never
// corrupt it or lose each other's entries.
package catalog
