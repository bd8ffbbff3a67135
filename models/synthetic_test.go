package models

import (
	"bytes"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/passes"
)

func TestSyntheticGPT(t *testing.T) {
	for _, n := range []int{1000, 5000} {
		m, err := SyntheticGPT(n, 7)
		if err != nil {
			t.Fatal(err)
		}
		got := numOps(m)
		if got < n || got > n+n/5+400 {
			t.Errorf("SyntheticGPT(%d) has %d ops", n, got)
		}
		if err := ir.Verify(m); err != nil {
			t.Fatal(err)
		}
		again, _ := SyntheticGPT(n, 7)
		if !bytes.Equal(ir.Print(m), ir.Print(again)) {
			t.Errorf("SyntheticGPT(%d, 7) is not deterministic", n)
		}
		other, _ := SyntheticGPT(n, 8)
		if bytes.Equal(ir.Print(m), ir.Print(other)) {
			t.Errorf("seeds 7 and 8 give the same module")
		}
	}
}

// A mesh of another shape partitions: its sizes divide evenly, and the
// op count does not depend on the mesh.
func TestSyntheticGPTMesh(t *testing.T) {
	def, err := SyntheticGPT(1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	same, err := SyntheticGPTMesh(1000, 3, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ir.Print(def), ir.Print(same)) {
		t.Errorf("SyntheticGPTMesh(…, 2, 4) differs from SyntheticGPT")
	}
	for _, mesh := range [][2]int{{8, 8}, {4, 4}, {1, 2}, {16, 4}} {
		m, err := SyntheticGPTMesh(1000, 3, mesh[0], mesh[1])
		if err != nil {
			t.Fatalf("%v: %v", mesh, err)
		}
		if got, want := numOps(m), numOps(def); got != want {
			t.Errorf("%v: %d ops, want %d", mesh, got, want)
		}
		if err := ir.Verify(m); err != nil {
			t.Fatalf("%v: %v", mesh, err)
		}
		last := mesh[0]*mesh[1] - 1
		if err := passes.Partition(m.Clone(), nil, last); err != nil {
			t.Errorf("%v: rank %d: %v", mesh, last, err)
		}
	}
	if _, err := SyntheticGPTMesh(1000, 3, 0, 4); err == nil {
		t.Errorf("a 0x4 mesh: no error")
	}
}
