//go:build !unix

package cli

// rusage is not available here.
func rusage() (cpuNs, faults int64, ok bool) { return 0, 0, false }
