//go:build !linux

package gctune

func hugePagesOnRequest() bool { return false }

func madviseHuge([]byte) bool { return false }

func memAvailable() uint64 { return 0 }
