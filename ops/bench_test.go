package ops_test

import (
	"strconv"
	"testing"

	"github.com/distpass/distpass/internal/irgen"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
	"github.com/distpass/distpass/ops"
)

// BenchmarkVerify verifies training modules with the op table's rules
// (rules=ops) and without (rules=ir, ir.Verify alone), at 10^5 and 10^6
// ops: the ratio is what the table costs. module=synthetic is ir's
// BenchmarkVerifySynthetic module; module=gpt the synthetic GPT (layer
// norms, attention reshapes, softmax, its grads and Adam), whose ops
// have more to infer.
func BenchmarkVerify(b *testing.B) {
	for _, mod := range []string{"synthetic", "gpt"} {
		for _, n := range []int{100000, 1000000} {
			var m *ir.Module
			if mod == "synthetic" {
				m = irgen.Synthetic(n)
			} else {
				var err error
				if m, err = models.SyntheticGPT(n, 1); err != nil {
					b.Fatal(err)
				}
			}
			for _, rules := range []string{"ir", "ops"} {
				b.Run("module="+mod+"/ops="+strconv.Itoa(n)+"/rules="+rules, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						var err error
						if rules == "ir" {
							err = ir.Verify(m)
						} else {
							_, err = ops.Verify(m, ops.Options{})
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.Main.NumOps()+m.Startup.NumOps()), "ns/op-verified")
				})
			}
			m = nil
		}
	}
}
