package models

import (
	"context"
	"testing"

	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/ir"
)

// TestGPTForwardOnly: the serial forward module verifies, and every
// strategy annotates it completely.
func TestGPTForwardOnly(t *testing.T) {
	for _, c := range strategyCases {
		t.Run(c.name(), func(t *testing.T) {
			m := GPT(TinyGPT())
			if err := ir.Verify(m); err != nil {
				t.Fatal(err)
			}
			if err := AnnotateGPT(m, c.strategy, Mesh(c.shape, c.dims)); err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m); err != nil {
				t.Fatal(err)
			}
			checkAnnotations(t, m)
		})
	}
}

// TestGPTTrainingChecks partitions the tiny GPT and runs three training
// steps serially and on every rank.
//
// The adam run is f64: the key bias's gradient is zero analytically
// (softmax ignores a shift that is the same for every key), so in f32 it
// is rounding noise of ~1e-10 that differs between the serial and the
// partitioned sums, and adam, dividing by sqrt(v)+1e-8, turns that noise
// into updates of ~lr: l0_k_b then differs by 8e-4 > 1e-4. In f64 the
// noise is below adam's epsilon and the run matches to 1e-11.
func TestGPTTrainingChecks(t *testing.T) {
	cases := []struct {
		c   strategyCase
		opt string
		dt  ir.DType
	}{
		{strategyCase{"dp", []int{2}, []string{"dp"}}, "sgd", ir.F32},
		{strategyCase{"mp", []int{2}, []string{"mp"}}, "sgd", ir.F32},
		{strategyCase{"dp,mp", []int{2, 2}, []string{"dp", "mp"}}, "sgd", ir.F32},
		{strategyCase{"dp,mp", []int{2, 4}, []string{"dp", "mp"}}, "sgd", ir.F32},
		{strategyCase{"dp,mp", []int{2, 2}, []string{"dp", "mp"}}, "adam", ir.F64},
	}
	for _, tc := range cases {
		t.Run(tc.c.name()+"/"+tc.opt+"/"+tc.dt.String(), func(t *testing.T) {
			cfg := TinyGPT()
			cfg.DType = tc.dt
			m, err := GPTTraining(cfg, tc.c.strategy, Mesh(tc.c.shape, tc.c.dims), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(m); err != nil {
				t.Fatal(err)
			}
			checkAnnotations(t, m)
			rep, err := check.Run(context.Background(), m, check.Options{Steps: 3})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			if len(rep.Rows) == 0 {
				t.Fatal("check compared nothing")
			}
		})
	}
}
