package viz

import (
	"strconv"
	"unicode/utf8"

	"github.com/distpass/distpass/ir"
)

// appendName appends s as the text format spells it: bare when it is a
// plain name, Go-quoted otherwise. A label thus shows the spelling of the
// .dpir file, and a quoted name carries no control character and no byte
// that is not UTF-8 (strconv.Quote escapes them).
func appendName(buf []byte, s string) []byte {
	if isBareName(s) {
		return append(buf, s...)
	}
	return strconv.AppendQuote(buf, s)
}

// isBareName is the text format's rule for names written without quotes:
// [A-Za-z_][A-Za-z0-9_.@]*.
func isBareName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isNameStart(c) && !('0' <= c && c <= '9') && c != '.' && c != '@' {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// appendInts appends xs as the text format writes a list: [0, -1].
func appendInts[T int | int64](buf []byte, xs []T) []byte {
	buf = append(buf, '[')
	for i, x := range xs {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = strconv.AppendInt(buf, int64(x), 10)
	}
	return append(buf, ']')
}

// appendType appends a var's type as the text format writes it: f32[8, 16],
// or the name of a no-shape kind.
func appendType(buf []byte, t ir.Type) []byte {
	if t.Kind != ir.DenseTensor {
		return append(buf, t.Kind.String()...)
	}
	buf = append(buf, t.DType.String()...)
	return appendInts(buf, t.Shape)
}

// appendTensorDist appends a distribution as the text format writes it:
// @world[0, -1] partial [0:avg], @world[-1] local [0].
func appendTensorDist(buf []byte, d *ir.TensorDist) []byte {
	buf = append(buf, '@')
	buf = appendName(buf, d.Mesh)
	buf = appendInts(buf, d.DimsMapping)
	if len(d.Partial) > 0 {
		buf = append(buf, " partial ["...)
		for i, pd := range d.Partial {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = strconv.AppendInt(buf, int64(pd.Dim), 10)
			if pd.Reduce != ir.ReduceSum {
				buf = append(buf, ':')
				buf = append(buf, pd.Reduce.String()...)
			}
		}
		buf = append(buf, ']')
	}
	if len(d.Local) > 0 {
		buf = append(buf, " local "...)
		buf = appendInts(buf, d.Local)
	}
	return buf
}

// appendDOTString appends text as a double-quoted DOT string that Graphviz
// displays as text, with '\n' starting a new centred line. The label text
// is built from appendName and fixed words, so it should hold nothing
// else that needs care; appendDOTString still makes any input safe:
//
//   - `"` and `\` are escaped, so the string ends where it should and no
//     Graphviz escape (\N, \G, \l, ...) is ever formed;
//   - `&` becomes &amp;, since Graphviz decodes HTML entities even in
//     plain labels;
//   - other control bytes and bytes that are not UTF-8 are shown as \xNN,
//     so the output is valid UTF-8 and dot does not warn about charsets.
func appendDOTString(buf []byte, text []byte) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '"':
			buf = append(buf, `\"`...)
		case c == '\\':
			buf = append(buf, `\\`...)
		case c == '\n':
			buf = append(buf, `\n`...)
		case c == '&':
			buf = append(buf, "&amp;"...)
		case c < 0x20 || c == 0x7f:
			buf = append(buf, '\\', '\\', 'x', hex[c>>4], hex[c&15])
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(text[i:])
			if r == utf8.RuneError && size == 1 {
				buf = append(buf, '\\', '\\', 'x', hex[c>>4], hex[c&15])
			} else {
				buf = append(buf, text[i:i+size]...)
			}
			i += size
			continue
		default:
			buf = append(buf, c)
		}
		i++
	}
	return append(buf, '"')
}
