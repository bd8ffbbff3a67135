package ops

import "github.com/distpass/distpass/ir"

// Helpers that keep the family files short: slot and attr constructors.

// in returns required single slots named names.
func in(names ...string) []Slot {
	ss := make([]Slot, len(names))
	for i, n := range names {
		ss[i] = Slot{Name: n}
	}
	return ss
}

// opt returns an optional single slot.
func opt(name string) Slot { return Slot{Name: name, Optional: true} }

// many returns a required variadic slot.
func many(name string) Slot { return Slot{Name: name, Variadic: true} }

// optMany returns an optional variadic slot.
func optMany(name string) Slot { return Slot{Name: name, Optional: true, Variadic: true} }

// noGrad returns a required single slot that receives no gradient.
func noGrad(name string) Slot { return Slot{Name: name, NoGrad: true} }

// slots concatenates slot lists and single slots.
func slots(parts ...any) []Slot {
	var ss []Slot
	for _, p := range parts {
		switch x := p.(type) {
		case Slot:
			ss = append(ss, x)
		case []Slot:
			ss = append(ss, x...)
		case string:
			ss = append(ss, Slot{Name: x})
		}
	}
	return ss
}

func intAttr(name string, def int64, allowed ...int64) Attr {
	a := Attr{Name: name, Type: ir.KindInt, Default: ir.Int(def)}
	for _, v := range allowed {
		a.Allowed = append(a.Allowed, ir.Int(v))
	}
	return a
}

// longAttr is an attr Paddle declares int64_t (LONG): a 64-bit int,
// where an intAttr is Paddle's int (INT), 32 bits, whose values Verify
// holds to int32's range.
func longAttr(name string, def int64) Attr {
	return Attr{Name: name, Type: ir.KindLong, Default: ir.Long(def)}
}

func floatAttr(name string, def float64) Attr {
	return Attr{Name: name, Type: ir.KindFloat, Default: ir.Float(def)}
}

func boolAttr(name string, def bool) Attr {
	return Attr{Name: name, Type: ir.KindBool, Default: ir.Bool(def)}
}

func stringAttr(name, def string, allowed ...string) Attr {
	a := Attr{Name: name, Type: ir.KindString, Default: ir.String(def)}
	for _, v := range allowed {
		a.Allowed = append(a.Allowed, ir.String(v))
	}
	return a
}

// intsAttr is an ints attr with default def (nil: no default).
func intsAttr(name string, def ...int64) Attr {
	a := Attr{Name: name, Type: ir.KindInts}
	if def != nil {
		a.Default = ir.Ints(def)
	}
	return a
}

// longsAttr is a longs attr (Paddle's std::vector<int64_t>: a shape
// that may exceed 32 bits) with default def (nil: no default); an
// intsAttr is Paddle's std::vector<int>, each element 32 bits.
func longsAttr(name string, def ...int64) Attr {
	a := Attr{Name: name, Type: ir.KindLongs}
	if def != nil {
		a.Default = ir.Longs(def)
	}
	return a
}

func floatsAttr(name string) Attr { return Attr{Name: name, Type: ir.KindFloats} }

func stringsAttr(name string) Attr { return Attr{Name: name, Type: ir.KindStrings} }

// dtypeAttr is a Paddle VarType code attr (cast's out_dtype,
// fill_constant's dtype).
func dtypeAttr(name string, def int64, allowed ...int64) Attr {
	a := intAttr(name, def, allowed...)
	a.DType = true
	return a
}

// pirDTypeAttr is a PIR dtype name attr (pd_op.full's dtype).
func pirDTypeAttr(name, def string) Attr {
	a := stringAttr(name, def)
	a.DType = true
	return a
}

// dtypeOf returns the dtype of a Paddle VarType code attr, or
// ir.DTypeInvalid (unchecked) when the code is unknown.
func (c *Infer) dtypeOf(name string) ir.DType {
	d, ok := ir.DTypeFromPaddle(c.Int(name))
	if !ok {
		return ir.DTypeInvalid
	}
	return d
}
