package ir

import "testing"

// S copies its args: a slot made from another op's arg list shares no
// memory with it.
func TestSCopiesArgs(t *testing.T) {
	args := []string{"a", "b"}
	s := S("X", args...)
	args[0] = "changed"
	if s.Args[0] != "a" {
		t.Errorf("S shares the caller's slice: Args = %v", s.Args)
	}
	if e := S("X"); e.Args == nil || len(e.Args) != 0 {
		t.Errorf(`S("X").Args = %#v, want an empty, non-nil list`, e.Args)
	}
}
