package paddle

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Error is a problem with a Paddle file: the file, what is wrong (naming
// the message and field), and the byte offset in the file where the
// offending field starts (-1 when the problem is not at one place).
type Error struct {
	File   string
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s at byte offset %d", e.File, e.Msg, e.Offset)
}

// field is one decoded field of a message: its number, wire type, where
// its tag starts in the file, and its value (a varint, a fixed32 or
// fixed64 in v, or the bytes of a length-delimited field in b).
type field struct {
	num  protowire.Number
	typ  protowire.Type
	off  int
	v    uint64
	b    []byte
	boff int  // file offset of b[0]
	cut  bool // the file ends inside b: b is what there is of it
}

// decoder walks the messages of one file; name is for errors.
type decoder struct {
	name string
	size int   // the file's length: a field that runs past it is truncated
	cut  error // the innermost truncation found, while one is reported
	// norms are the normalisations made, in the file's order.
	norms []Normalisation
}

func (d *decoder) errf(off int, format string, args ...any) error {
	return &Error{File: d.name, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// each calls fn for every field of the message b, which starts at file
// offset off. A malformed tag or value, or a group, is an error naming msg.
// A message that runs to the end of the file may have been cut short
// there: a field the file ends inside is an error that says so (see
// truncated.go), naming the innermost field being read.
func (d *decoder) each(msg string, b []byte, off int, fn func(f *field) error) error {
	var f field
	atEnd := off+len(b) >= d.size
	pos := 0
	for pos < len(b) {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			if n == -1 && atEnd {
				return d.truncErr(off+pos, "%s: truncated: the file ends inside a field's tag", msg)
			}
			return d.errf(off+pos, "%s: malformed field tag (%v)", msg, parseErr(n))
		}
		f = field{num: num, typ: typ, off: off + pos}
		pos += n
		what := "value"
		switch typ {
		case protowire.VarintType:
			f.v, n = protowire.ConsumeVarint(b[pos:])
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b[pos:])
			f.v = uint64(v)
		case protowire.Fixed64Type:
			f.v, n = protowire.ConsumeFixed64(b[pos:])
		case protowire.BytesType:
			l, ln := protowire.ConsumeVarint(b[pos:])
			if ln < 0 {
				n, what = ln, "length"
				break
			}
			if rest := len(b) - pos - ln; l > uint64(rest) {
				if !atEnd {
					n = -1 // runs past the end of its message
					break
				}
				// The file ends inside this field: read what there is,
				// to find the field inside it that the file ends in.
				f.b, f.boff, f.cut = b[pos+ln:], off+pos+ln, true
				cut := d.errf(f.off, "%s: %s truncated: its value has %d bytes, the file ends after %d of them", msg, spell(msg, num), l, rest)
				return d.within(cut, func() { _ = fn(&f) })
			}
			f.b, f.boff = b[pos+ln:pos+ln+int(l)], off+pos+ln
			n = ln + int(l)
		default:
			return d.errf(f.off, "%s: field %d has wire type %d (groups are not used by Paddle)", msg, num, typ)
		}
		if n < 0 {
			if n == -1 && atEnd {
				where := "inside"
				if pos == len(b) {
					where = "before"
				}
				return d.truncErr(f.off, "%s: %s truncated: the file ends %s its %s", msg, spell(msg, num), where, what)
			}
			return d.errf(f.off, "%s: field %d: malformed value (%v)", msg, num, parseErr(n))
		}
		pos += n
		if err := fn(&f); err != nil {
			return err
		}
	}
	return nil
}

// parseErr says what a negative length from protowire's Consume functions
// means. (protowire's own messages vary their spaces on purpose, so that
// nobody matches them; ours are stable.)
func parseErr(n int) string {
	switch n {
	case -1:
		return "unexpected end of data"
	case -2:
		return "invalid field number"
	case -3:
		return "varint overflows 64 bits"
	case -4:
		return "reserved field number"
	}
	return "malformed"
}

// wireNames spells wire types in messages.
var wireNames = map[protowire.Type]string{
	protowire.VarintType: "varint", protowire.Fixed32Type: "fixed32",
	protowire.Fixed64Type: "fixed64", protowire.BytesType: "bytes",
}

func (d *decoder) unknown(msg string, f *field) error {
	return d.errf(f.off, "%s: unknown field %d (%s)", msg, f.num, wireNames[f.typ])
}

func (d *decoder) wrongType(msg, fname string, f *field, want protowire.Type) error {
	return d.errf(f.off, "%s: field %d (%s) has wire type %s, want %s", msg, f.num, fname, wireNames[f.typ], wireNames[want])
}

// scalar checks that f has wire type want, for a singular field.
func (d *decoder) scalar(msg, fname string, f *field, want protowire.Type) error {
	if f.typ != want {
		return d.wrongType(msg, fname, f, want)
	}
	return nil
}

// int32Of reads an int32 varint: negatives are sign-extended to ten bytes
// on the wire, and a value beyond 32 bits is an error.
func (d *decoder) int32Of(msg, fname string, f *field) (int32, error) {
	if err := d.scalar(msg, fname, f, protowire.VarintType); err != nil {
		return 0, err
	}
	v := int64(f.v)
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, d.errf(f.off, "%s: field %d (%s): value %d out of int32 range", msg, f.num, fname, v)
	}
	return int32(v), nil
}

// repeated calls one for each element of a repeated scalar field, packed
// (one length-delimited field) or not (a field per element).
func (d *decoder) repeated(msg, fname string, f *field, want protowire.Type, one func(v uint64) error) error {
	if f.typ == want {
		return one(f.v)
	}
	if f.typ != protowire.BytesType {
		return d.wrongType(msg, fname, f, want)
	}
	b := f.b
	for len(b) > 0 {
		var v uint64
		var n int
		switch want {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		default:
			v, n = protowire.ConsumeFixed64(b)
		}
		if n < 0 {
			return d.errf(f.boff+len(f.b)-len(b), "%s: field %d (%s): malformed packed element (%v)", msg, f.num, fname, parseErr(n))
		}
		if err := one(v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// int32s reads the elements of a repeated int32 field into *xs.
func (d *decoder) int32s(msg, fname string, f *field, xs *[]int32) error {
	return d.repeated(msg, fname, f, protowire.VarintType, func(v uint64) error {
		x := int64(v)
		if x < math.MinInt32 || x > math.MaxInt32 {
			return d.errf(f.off, "%s: field %d (%s): value %d out of int32 range", msg, f.num, fname, x)
		}
		*xs = append(*xs, int32(x))
		return nil
	})
}

// str reads a string field.
func (d *decoder) str(msg, fname string, f *field) (string, error) {
	if err := d.scalar(msg, fname, f, protowire.BytesType); err != nil {
		return "", err
	}
	return string(f.b), nil
}

// f32to64 widens float32 bits to a float64, keeping a NaN's sign and
// payload (a hardware conversion would quiet a signalling NaN), so that
// f64to32 gives the same bits back.
func f32to64(bits uint32) float64 {
	if f := math.Float32frombits(bits); f == f {
		return float64(f)
	}
	return math.Float64frombits(uint64(bits>>31)<<63 | 0x7ff<<52 | uint64(bits&0x7fffff)<<29)
}

// f64to32 narrows a float64 to float32 bits: exact for every value
// f32to64 returns, rounded to nearest otherwise.
func f64to32(f float64) uint32 {
	if f == f {
		return math.Float32bits(float32(f))
	}
	b := math.Float64bits(f)
	m := uint32(b>>29) & 0x7fffff
	if m == 0 {
		m = 0x400000 // a payload only in the low bits: a quiet NaN
	}
	return uint32(b>>63)<<31 | 0xff<<23 | m
}

// float32Exact reports whether f survives narrowing to float32 (a NaN
// comes back a NaN, which is all ir.Equal asks of it).
func float32Exact(f float64) bool {
	if f != f {
		return true
	}
	return float64(float32(f)) == f && (f != 0 || math.Signbit(f) == math.Signbit(float64(float32(f))))
}
