package paddle_test

import (
	"os"
	"strings"
	"testing"

	"github.com/distpass/distpass/interop/paddle"
)

// Every prefix of a real ProgramDesc is told as truncated, naming the
// field the file ends in and its offset, never as a malformed field of
// some outer message (issue 37, finding 13).
func TestTruncatedAtEveryByte(t *testing.T) {
	data, err := os.ReadFile("testdata/lite_conv_bn_relu.pdmodel")
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n < len(data); n++ {
		_, err := paddle.Import("f.pdmodel", data[:n])
		if err == nil {
			// A prefix that ends between the ProgramDesc's own fields is a
			// whole ProgramDesc of fewer fields.
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, " truncated: ") || !strings.Contains(msg, "the file ends") || !strings.Contains(msg, " at byte offset ") {
			t.Fatalf("the first %d bytes: %s", n, msg)
		}
	}
	tests := []struct {
		n    int
		want string
	}{
		{1, "f.pdmodel: ProgramDesc: field 1 (blocks) truncated: the file ends before its length at byte offset 0"},
		{3, "f.pdmodel: ProgramDesc: field 1 (blocks) truncated: its value has 7411 bytes, the file ends after 0 of them at byte offset 0"},
		{100, `f.pdmodel: BlockDesc 0 > VarDesc "conv2d_0.tmp_0" > VarType > dense_tensor > TensorDesc: field 2 (dims) truncated: the file ends inside its value at byte offset 97`},
		{8000, "f.pdmodel: OpVersionPair: field 1 (op_name) truncated: the file ends before its length at byte offset 7999"},
	}
	for _, tt := range tests {
		_, err := paddle.Import("f.pdmodel", data[:tt.n])
		if err == nil || err.Error() != tt.want {
			t.Errorf("the first %d bytes: %v\nwant %s", tt.n, err, tt.want)
		}
	}
}
