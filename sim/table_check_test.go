package sim

import (
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
)

// TestTableCheck: the op table and the built-in kernels keep every
// promise CheckTable holds them to.
func TestTableCheck(t *testing.T) {
	if err := CheckTable(DefaultKernels()); err != nil {
		t.Fatal(err)
	}
}

// TestTableCheckFindsBrokenPromises: a kernel of an undefined type and a
// forward kernel whose grad kernel is gone are reported, each by type.
func TestTableCheckFindsBrokenPromises(t *testing.T) {
	ks := DefaultKernels()
	ks["no_such_op"] = func(*ir.Op, Args) (Args, error) { return nil, nil }
	delete(ks, "relu_grad")
	err := CheckTable(ks)
	for _, want := range []string{
		"no_such_op: a kernel, and the op table does not define it",
		"relu: a kernel and a gradient, and its grad op type relu_grad has no kernel",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want it to contain %q", err, want)
		}
	}
}
