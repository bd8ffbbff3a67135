package gctune

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// hugePageSize is the size Linux's transparent huge pages have on the
// machines distpass runs on (x86-64 and arm64 with 4 KB base pages).
const hugePageSize = 2 << 20

// hugePagesOnRequest reports whether the kernel backs advised memory with
// huge pages: the mode is "always" or "madvise", not "never" nor absent.
func hugePagesOnRequest() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && !strings.Contains(string(b), "[never]")
}

// madviseHuge advises huge pages for the 2 MB-aligned part of b; the
// advice covers whole pages only.
func madviseHuge(b []byte) bool {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + hugePageSize - 1) &^ (hugePageSize - 1)
	hi := (p + uintptr(len(b))) &^ (hugePageSize - 1)
	if hi <= lo {
		return false
	}
	return syscall.Madvise(b[lo-p:hi-p], syscall.MADV_HUGEPAGE) == nil
}

// memAvailable is the kernel's estimate of the memory available to start
// new work (MemAvailable in /proc/meminfo), 0 when unknown.
func memAvailable() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}
