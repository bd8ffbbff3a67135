package models

import (
	"bytes"
	"testing"

	"github.com/distpass/distpass/ir"
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
