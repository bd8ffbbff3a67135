package ops_test

import (
	"testing"

	"github.com/distpass/distpass/ops"
)

func TestTableWellFormed(t *testing.T) {
	if err := ops.Check(); err != nil {
		t.Fatal(err)
	}
	for _, d := range ops.All() {
		if ops.Lookup(d.Type) != d {
			t.Errorf("Lookup(%q) is not the def All lists", d.Type)
		}
	}
}
