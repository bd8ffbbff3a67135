package paddle

// Format is what a file's content says it is.
type Format int

// The formats Sniff tells apart.
const (
	Unknown     Format = iota
	ProgramDesc        // a ProgramDesc protobuf: starts with 0x0A (field 1, bytes)
	Pickle             // a Python pickle: starts with 0x80 (the PROTO opcode)
)

func (f Format) String() string {
	switch f {
	case ProgramDesc:
		return "ProgramDesc"
	case Pickle:
		return "pickle"
	}
	return "unknown"
}

// Sniff says what data is from its first byte, as netron does: a
// ProgramDesc starts with field 1 (blocks) as bytes, 0x0A; a pickle with
// 0x80.
func Sniff(data []byte) Format {
	if len(data) == 0 {
		return Unknown
	}
	switch data[0] {
	case 0x0A:
		return ProgramDesc
	case 0x80:
		return Pickle
	}
	return Unknown
}

// IsBinary reports whether data, whose first byte Sniff took for a
// ProgramDesc or a pickle, is binary rather than text that happens to
// start with a newline: text has no control bytes but tab, newline and
// carriage return. A real ProgramDesc has some within its first bytes (a
// block starts with its idx field, 0x08).
func IsBinary(data []byte) bool {
	if len(data) > 64 {
		data = data[:64]
	}
	for i, c := range data {
		if i == 0 && (c == 0x0A || c == 0x80) {
			continue
		}
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return true
		}
	}
	return false
}
