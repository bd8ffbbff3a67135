package complete_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/distpass/distpass/analysis"
	"github.com/distpass/distpass/check"
	"github.com/distpass/distpass/complete"
	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/models"
)

func TestExplore(t *testing.T) {
	mesh := models.Mesh([]int{2, 2}, []string{"dp", "mp"})
	m, err := models.MLPTraining(models.MLPConfig{Layers: 2, Hidden: 8, Batch: 4, DType: ir.F64}, "dp,mp", mesh, "sgd")
	if err != nil {
		t.Fatal(err)
	}
	want := m.Clone()
	strip(m, nil)
	rep, err := complete.Complete(m, complete.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(rep.Summary())
	ir.Fprint(testWriter{t}, m)
	_ = want
	ar, err := analysis.Get[*analysis.AnnotationReport](analysis.NewCache(m), analysis.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	if err := ar.Err(); err != nil {
		t.Fatal(err)
	}
	cr, err := check.Run(context.Background(), m, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cr.Err(); err != nil {
		t.Fatal(err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
