//go:build unix

package cli

import "syscall"

// rusage returns the CPU time (user and system, in ns) and the minor page
// faults of the process so far, and whether they are known.
func rusage() (cpuNs, faults int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), int64(ru.Minflt), true
}
