package ir_test

import (
	"testing"

	"github.com/distpass/distpass/ir"
)

func TestParseMesh(t *testing.T) {
	pm, err := ir.ParseMesh("m", "world shape [2, 2] dims [dp, mp] ranks [0, 1, 2, 3]")
	if err != nil {
		t.Fatal(err)
	}
	if got := ir.FormatInts(pm.Shape) + " " + ir.FormatInts(pm.ProcessIDs); pm.Name != "world" || got != "[2, 2] [0, 1, 2, 3]" || len(pm.DimNames) != 2 || pm.DimNames[1] != "mp" {
		t.Errorf("got %+v", pm)
	}
	for src, want := range map[string]string{
		"world shape [2] dims [dp]":                  `m:1:26: expected "ranks", found end of file`,
		"world shape [2] dims [dp] ranks [0, 1] x":   `m:1:40: expected the end, found name "x"`,
		"mesh world shape [2] dims [dp] ranks [0,1]": `m:1:6: expected "shape", found name "world"`,
	} {
		if _, err := ir.ParseMesh("m", src); err == nil || err.Error() != want {
			t.Errorf("ParseMesh(%q) = %v, want %s", src, err, want)
		}
	}
}

func TestParseDist(t *testing.T) {
	for src, want := range map[string]string{
		"@world[0, -1]":                    "@world[0, -1]",
		"@world[-1, 1] partial [0:avg]":    "@world[-1, 1] partial [0:avg]",
		"  @w[]  ":                         "@w[]",
		"@world[-1, 1] partial [1, 0:avg]": `d:1:27: partial dims must be ascending and unique`,
		"world[0]":                         `d:1:1: expected "@", found name "world"`,
		"@world[0] {trainable}":            `d:1:11: expected the end, found "{"`,
		"@world[0] partial [0:mean]":       `d:1:22: unknown reduction "mean" (want sum, avg, max or min)`,
	} {
		d, err := ir.ParseDist("d", src)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = d.String()
		}
		if got != want {
			t.Errorf("ParseDist(%q) = %s, want %s", src, got, want)
		}
	}
}
