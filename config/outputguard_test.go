package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// settings.outputGuard (seed 002): false turns the guard off with a
// warning; the object form sets the preview bounds.
func TestOutputGuardSetting(t *testing.T) {
	set, issues, _ := parseSettings(map[string]json.RawMessage{"outputGuard": json.RawMessage(`false`)}, nil)
	if !set.OutputGuardOff || len(issues) != 1 || !strings.Contains(issues[0].Message, "uncut and unbounded") {
		t.Fatalf("false: %+v %v", set, issues)
	}
	set, issues, _ = parseSettings(map[string]json.RawMessage{"outputGuard": json.RawMessage(`{"maxBytes":100,"maxLines":5,"detailsMaxBytes":64}`)}, nil)
	if set.OutputGuardOff || len(issues) != 0 || set.Output == nil || *set.Output.MaxTextBytes != 100 || *set.Output.MaxLines != 5 || *set.Output.MaxDetailsBytes != 64 {
		t.Fatalf("object: %+v %v", set, issues)
	}
	set, issues, _ = parseSettings(map[string]json.RawMessage{"outputGuard": json.RawMessage(`true`)}, nil)
	if set.OutputGuardOff || len(issues) != 0 {
		t.Fatalf("true: %+v %v", set, issues)
	}
	if _, issues, _ = parseSettings(map[string]json.RawMessage{"outputGuard": json.RawMessage(`"off"`)}, nil); len(issues) != 1 {
		t.Fatalf("a string: %v", issues)
	}
}
