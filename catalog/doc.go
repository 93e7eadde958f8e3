// Package catalog owns server metadata: the on-disk metadata cache and its
// invalidation by identity hash, search ranking and output-schema
// validation.
//
// Concurrency contract: pure functions and values owned by their caller; the
// cache file is written atomically (temp file and rename under a file lock)
// so concurrent runtimes never corrupt it.
//
// The proxy-tool issue fills this package; the runtime core only reserves it.
package catalog
