// Package gctune tunes a process's heap for building one large module: it
// lets the heap grow to a size before the garbage collector runs at its
// usual pace, as the Go compiler does for itself (StartingHeap), and it
// readies the heap a command expects to be backed by huge pages
// (PrepareHeap), which the binary does only when DISTPASS_HUGEPAGES=1
// asks for it.
//
// distpass reads a module and builds it once: a heap of objects that all
// stay live. With the default GOGC the collector marks that growing heap
// each time it doubles, marking the same objects again and again while
// none of them is garbage. Raising GOGC until the live heap nears a
// target, and restoring it then, keeps the peak at about
// max(target, 2 × live).
package gctune
