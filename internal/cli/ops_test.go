package cli

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/distpass/distpass/ir"
)

// Every attr value becomes something encoding/json writes: a non-finite
// float, which JSON has no number for, becomes its .dpir text.
func TestJSONValue(t *testing.T) {
	for _, c := range []struct {
		v    ir.Value
		want string
	}{
		{ir.Int(-1), `-1`}, {ir.Long(5), `5`}, {ir.Float(0.5), `0.5`}, {ir.Bool(true), `true`},
		{ir.String("NCHW"), `"NCHW"`}, {ir.Ints{}, `[]`}, {ir.Ints(nil), `[]`}, {ir.Floats(nil), `[]`}, {ir.Ints{1, 2}, `[1,2]`}, {ir.Longs{3}, `[3]`},
		{ir.Strings{"a"}, `["a"]`}, {ir.Float(math.Inf(1)), `"inf"`}, {ir.Floats{1, math.NaN()}, `"[1.0, nan]"`},
		{ir.Float64(2), `2`}, {ir.BlockRef(1), `"^1"`},
	} {
		b, err := json.Marshal(jsonValue(c.v))
		if err != nil || string(b) != c.want {
			t.Errorf("jsonValue(%#v) encodes as %s (%v), want %s", c.v, b, err, c.want)
		}
	}
}
