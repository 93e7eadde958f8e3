// Package config reads MCP configuration files into the effective set of
// servers: which files are read and in what order, how entries are parsed
// and validated, and what each server's settings resolve to.
//
// It is pure: it reads configuration files and nothing else (no network,
// no child processes, no clock). Every diagnostic it produces names a file,
// a server (or, for an unusable name, the entry's position) and a field,
// never a value from the configuration.
//
// Concurrency contract: functions are safe for concurrent use; returned
// values are owned by the caller and never shared with other calls.
//
// The runtime-core issue implements the first sources (--config FILE or
// .mcp.json in the working directory); the configuration issue adds the
// remaining layers, host imports and interpolation here.
package config
