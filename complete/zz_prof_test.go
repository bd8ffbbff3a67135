package complete_test

import (
	"testing"

	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/models"
)

func TestProf(t *testing.T) {
	m, err := models.SyntheticGPTMesh(100000, 1, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	strip(m, nil)
	if _, err := complete.Complete(m, complete.Options{}); err != nil {
		t.Fatal(err)
	}
}
