package opdef_test

import (
	"testing"

	"github.com/distpass/distpass/analysis/opdef"
)

func TestTableWellFormed(t *testing.T) {
	if err := opdef.Check(); err != nil {
		t.Fatal(err)
	}
	for _, d := range opdef.All() {
		if opdef.Lookup(d.Type) != d {
			t.Errorf("Lookup(%q) is not the def All lists", d.Type)
		}
	}
}
