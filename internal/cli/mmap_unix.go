//go:build unix

package cli

import (
	"os"
	"syscall"
)

// mapFile maps a regular file read-only. On the machines distpass runs on,
// faulting in fresh heap memory is the largest cost of reading a large
// program; mapped page-cache pages cost a tenth of that. The mapping is
// never released: names in the parsed module point into it, and the
// command exits when done. ok is false when the file cannot be mapped
// (empty, not regular, or mmap refused); the caller then reads it.
func mapFile(f *os.File) (data []byte, ok bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() != int64(int(st.Size())) {
		return nil, false
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return data, true
}
