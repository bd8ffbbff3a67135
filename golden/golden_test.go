package golden_test

import (
	"testing"

	"github.com/distpass/distpass/golden"
)

func TestGolden(t *testing.T) { golden.RunDir(t, "testdata") }
