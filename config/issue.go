package config

import "fmt"

// Issue is one problem with a configuration: a dropped entry, an ignored
// field or setting, or a server that cannot connect as configured. It
// never contains a value from the configuration: it names a file, a server
// (or, for an unusable name, the entry's 1-based position) and a field.
type Issue struct {
	// File is the file concerned ("" for in-memory configuration).
	File string `json:"file,omitempty"`
	// Server is the entry's name, or "#N" (its 1-based position in the
	// file's server object) when the name itself is unusable.
	Server string `json:"server,omitempty"`
	// Field is the field concerned (oauth.clientSecret, settings.toolPrefix,
	// imports[2], ...), "" for the whole entry.
	Field string `json:"field,omitempty"`
	// Message says what is wrong and how to fix it.
	Message string `json:"message"`
}

// String renders the issue on one line.
func (i Issue) String() string {
	s := ""
	if i.File != "" {
		s = i.File + ": "
	}
	if i.Server != "" {
		s += "server " + quoteName(i.Server) + ": "
	}
	if i.Field != "" {
		s += "field " + i.Field + ": "
	}
	return s + i.Message
}

func quoteName(n string) string {
	if len(n) > 0 && n[0] == '#' {
		return "entry " + n
	}
	return fmt.Sprintf("%q", n)
}
