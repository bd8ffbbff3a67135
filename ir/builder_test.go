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

// FreshName never hands out the name of a var declared after its first
// call, in any block of any program: the generator that made the
// module's ops (the builder's FreshOpID) knew none of the vars added
// since.
func TestFreshNameSeesVarsAddedLater(t *testing.T) {
	m := NewModule("m")
	m.FreshOpID() // the generator exists from here on
	if err := m.Main.Global().AddVar(&Var{name: "tmp_0", Type: Tensor(F32)}); err != nil {
		t.Fatal(err)
	}
	sub := m.Main.AddBlock(0)
	if err := sub.AddVar(&Var{name: "tmp_1", Type: Tensor(F32)}); err != nil {
		t.Fatal(err)
	}
	m.Startup = NewProgram("startup")
	if err := m.Startup.Global().AddVar(&Var{name: "tmp_2", Type: Tensor(F32)}); err != nil {
		t.Fatal(err)
	}
	if got := m.FreshName("tmp"); got != "tmp_3" {
		t.Errorf("FreshName(tmp) = %s, want tmp_3: tmp_0, _1 and _2 are declared", got)
	}
	if got := m.FreshName("tmp"); got != "tmp_4" {
		t.Errorf("second FreshName(tmp) = %s, want tmp_4", got)
	}
}
