package paddle

import (
	"bytes"
	"unicode/utf8"
)

// Format is what a file's content says it is.
type Format int

// The formats Sniff tells apart.
const (
	Unknown     Format = iota
	ProgramDesc        // a ProgramDesc protobuf: starts with 0x0A (field 1, bytes)
	Pickle             // a Python pickle: starts with 0x80 (the PROTO opcode)
	PIR                // a Paddle 3 PIR JSON program: base_code.magic is "pir"
)

func (f Format) String() string {
	switch f {
	case ProgramDesc:
		return "ProgramDesc"
	case Pickle:
		return "pickle"
	case PIR:
		return "PIR JSON"
	}
	return "unknown"
}

// Sniff says what data is from its content, whatever the file is called:
// a ProgramDesc starts with field 1 (blocks) as bytes, 0x0A, and a pickle
// with 0x80, as netron tells them; either must also be binary (see
// isBinary), since text may start with a newline. A PIR program is a JSON
// object whose base_code.magic is "pir". Anything else is Unknown: the
// IR's own text or JSON, or nothing distpass reads.
func Sniff(data []byte) Format {
	if len(data) == 0 {
		return Unknown
	}
	switch data[0] {
	case 0x0A:
		if isBinary(data) {
			return ProgramDesc
		}
	case 0x80:
		// A lone 0x80 byte is not UTF-8: no text starts with it.
		return Pickle
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' && IsPIR(data) {
		return PIR
	}
	return Unknown
}

// isBinary reports whether data, which starts with a newline, is binary
// rather than text: .dpir text is UTF-8 without control bytes but tab,
// newline and carriage return. A real ProgramDesc has some within its
// first bytes (its first block starts with the idx field, 0x08), and a
// ProgramDesc cut short after two or three bytes has the high byte of its
// length varint, which is not UTF-8 there.
func isBinary(data []byte) bool {
	const window = 64
	head := data[1:min(len(data), window)]
	for i := 0; i < len(head); {
		c := head[i]
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return true
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(head[i:])
		// A rune cut by the window's end is not evidence of binary.
		if r == utf8.RuneError && n == 1 && (len(data) <= window || i+utf8.UTFMax <= len(head)) {
			return true
		}
		i += n
	}
	return false
}
