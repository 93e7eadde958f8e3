//go:build !unix

package bench

import "time"

// processCPU is not measured where getrusage is missing (Windows): the
// benchmarks report zero CPU per call there.
func processCPU() time.Duration { return 0 }
