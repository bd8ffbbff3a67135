package paddle

import (
	"os"
	"strings"
	"testing"
)

// TestSniff: a Paddle file is told by content, however short it was cut;
// text that starts with a newline stays text.
func TestSniff(t *testing.T) {
	pd, err := os.ReadFile("testdata/lite_conv_bn_relu.pdmodel")
	if err != nil {
		t.Fatal(err)
	}
	pir, err := os.ReadFile("testdata/p2o_pir_thresholded_relu.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data string
		want Format
	}{
		{"empty", "", Unknown},
		{"ProgramDesc", string(pd), ProgramDesc},
		{"ProgramDesc cut to 2 bytes", string(pd[:2]), ProgramDesc},
		{"ProgramDesc cut to 3 bytes", string(pd[:3]), ProgramDesc},
		{"ProgramDesc cut to 100 bytes", string(pd[:100]), ProgramDesc},
		{"a lone newline", "\n", Unknown},
		{"text after a newline", "\nmodule m\nmesh world shape [2] dims [dp] ranks [0, 1]\n", Unknown},
		{"UTF-8 text after a newline", "\n# ünïcödé comment\nmodule m\n", Unknown},
		{"a rune cut by the window", "\n# " + strings.Repeat("a", 60) + "é", Unknown},
		{"pickle", "\x80\x04}q\x00.", Pickle},
		{"PIR", string(pir), PIR},
		{"PIR after white space", "\n " + string(pir), PIR},
		{"IR JSON", `{"version": 1, "main": {}}`, Unknown},
	}
	for _, c := range cases {
		if got := Sniff([]byte(c.data)); got != c.want {
			t.Errorf("%s: Sniff = %v, want %v", c.name, got, c.want)
		}
	}
}
