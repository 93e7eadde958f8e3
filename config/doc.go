// Package config reads MCP configuration into the effective set of
// servers: which files are read and in what order (NativeFiles), how they
// merge field by field with the file of every field remembered
// (Server.Provenance), which other hosts' files an "imports" list pulls in
// (HostKinds), how entries are parsed and validated, how variables are
// interpolated, and what each server's endpoint resolves to
// (Server.Endpoint). docs/config.md is the user's reference.
//
// It is pure: it reads configuration files and, through
// Sources.LookupEnv, environment variables; nothing else (no network, no
// child processes, no clock, no writes). A secret taken from a command
// ("!command") stays a reference here; transports runs it when the
// connection opens. The edits behind "runtime enable", "runtime disable"
// and "runtime config detect --write" (SetDisabled, AddImports,
// PlanToggle, PlanImports) return a file's new content for the caller to
// write.
//
// Every diagnostic names a file, a server (or, for an unusable name, the
// entry's 1-based position) and a field, never a value from the
// configuration; Show renders configuration with secret values masked.
//
// Concurrency contract: functions are safe for concurrent use; returned
// values are owned by the caller and never shared with other calls.
package config
