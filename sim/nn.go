package sim

import (
	"math"
	"slices"

	"github.com/distpass/distpass/ir"
)

// embedPlan checks an embedding's inputs: Ids of any shape, W [rows, D].
// For c_embedding, W holds rows [start_index, start_index+rows) of the
// full table; ids outside give zero rows (and no grad).
func embedPlan(op *ir.Op, in Args, sharded bool) (ids, w *Tensor, start, pad int64, err error) {
	if ids, err = one(op, in, "Ids"); err != nil {
		return
	}
	if w, err = one(op, in, "W"); err != nil {
		return
	}
	if w.Rank() != 2 {
		return nil, nil, 0, 0, errf(op, "W shape %v, want 2-D", w.Shape)
	}
	pad = -1
	if sharded {
		start = attrInt(op, "start_index", 0)
	} else {
		pad = attrInt(op, "padding_idx", -1)
		if pad < 0 && pad != -1 {
			pad += w.Shape[0]
		}
		for _, id := range ids.Data {
			if id < 0 || int64(id) >= w.Shape[0] {
				return nil, nil, 0, 0, errf(op, "id %v out of range for W %v", id, w.Shape)
			}
		}
	}
	return
}

// row returns the local row of id, or -1 when it gives zeros.
func embedRow(id float64, rows, start, pad int64) int64 {
	r := int64(id) - start
	if r < 0 || r >= rows || int64(id) == pad {
		return -1
	}
	return r
}

func embedding(sharded bool) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		ids, w, start, pad, err := embedPlan(op, in, sharded)
		if err != nil {
			return nil, err
		}
		d := w.Shape[1]
		out := Zeros(w.DType, append(slices.Clone(ids.Shape), d)...)
		for i, id := range ids.Data {
			if r := embedRow(id, w.Shape[0], start, pad); r >= 0 {
				copy(out.Data[int64(i)*d:(int64(i)+1)*d], w.Data[r*d:(r+1)*d])
			}
		}
		return out1("Out", out), nil
	}
}

func embeddingGrad(sharded bool) Kernel {
	return func(op *ir.Op, in Args) (Args, error) {
		ids, w, start, pad, err := embedPlan(op, in, sharded)
		if err != nil {
			return nil, err
		}
		g, err := one(op, in, "Out@GRAD")
		if err != nil {
			return nil, err
		}
		d := w.Shape[1]
		if want := append(slices.Clone(ids.Shape), d); !slices.Equal(g.Shape, want) {
			return nil, errf(op, "Out@GRAD shape %v, want %v", g.Shape, want)
		}
		dw := Zeros(g.DType, w.Shape...)
		for i, id := range ids.Data {
			if r := embedRow(id, w.Shape[0], start, pad); r >= 0 {
				for j := range d {
					dw.Data[r*d+j] += g.Data[int64(i)*d+j]
				}
			}
		}
		return out1("W@GRAD", dw), nil
	}
}

// softmaxXent is softmax_with_cross_entropy with hard labels on the last
// axis (axis attr honoured): Label has Logits' shape with 1 on the axis;
// Loss = -log(Softmax[label]); ignore_index (default -100) gives 0 loss.
func softmaxXent(op *ir.Op, in Args) (Args, error) {
	x, lab, ax, err := xentPlan(op, in, "Logits")
	if err != nil {
		return nil, err
	}
	sm := like(x)
	softmaxInto(x.Data, sm.Data, x.Shape, ax)
	lossShape := slices.Clone(x.Shape)
	lossShape[ax] = 1
	loss := Zeros(x.DType, lossShape...)
	ign := attrInt(op, "ignore_index", -100)
	n := x.Shape[ax]
	k := int64(0)
	var bad error
	lanes(x.Shape, ax, func(base, st int64) {
		l := int64(lab.Data[k])
		switch {
		case l == ign:
		case l < 0 || l >= n:
			if bad == nil {
				bad = errf(op, "label %d out of range [0, %d)", l, n)
			}
		default:
			loss.Data[k] = -math.Log(sm.Data[base+l*st])
		}
		k++
	})
	if bad != nil {
		return nil, bad
	}
	return Args{"Softmax": {sm}, "Loss": {loss}}, nil
}

// xentPlan checks Logits (or Softmax) against Label. Lanes are visited in
// the same order as the Label elements (both row-major with the axis
// removed), which the kernels rely on.
func xentPlan(op *ir.Op, in Args, src string) (x, lab *Tensor, ax int, err error) {
	if x, err = one(op, in, src); err != nil {
		return
	}
	if lab, err = one(op, in, "Label"); err != nil {
		return
	}
	if attrBool(op, "soft_label", false) {
		return nil, nil, 0, errf(op, "soft_label is not supported")
	}
	if !attrBool(op, "use_softmax", true) {
		return nil, nil, 0, errf(op, "use_softmax = false (Logits already probabilities) is not supported")
	}
	if x.Rank() == 0 {
		return nil, nil, 0, errf(op, "%s is a scalar", src)
	}
	if ax, err = normAxis(op, attrInt(op, "axis", -1), x.Rank()); err != nil {
		return
	}
	want := slices.Clone(x.Shape)
	want[ax] = 1
	if !slices.Equal(lab.Shape, want) {
		return nil, nil, 0, errf(op, "%s shape %v and Label shape %v: want Label %v", src, x.Shape, lab.Shape, want)
	}
	return
}

// softmaxXentGrad is Logits@GRAD = (Softmax - onehot(Label)) * Loss@GRAD.
func softmaxXentGrad(op *ir.Op, in Args) (Args, error) {
	sm, lab, ax, err := xentPlan(op, in, "Softmax")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Loss@GRAD")
	if err != nil {
		return nil, err
	}
	if !slices.Equal(g.Shape, lab.Shape) {
		return nil, errf(op, "Loss@GRAD shape %v, want %v", g.Shape, lab.Shape)
	}
	ign := attrInt(op, "ignore_index", -100)
	n := sm.Shape[ax]
	dx := like(sm)
	k := int64(0)
	lanes(sm.Shape, ax, func(base, st int64) {
		l := int64(lab.Data[k])
		if l != ign {
			for j := range n {
				v := sm.Data[base+j*st]
				if j == l {
					v--
				}
				dx.Data[base+j*st] = v * g.Data[k]
			}
		}
		k++
	})
	return out1("Logits@GRAD", dx), nil
}

// lnPlan splits X at begin_norm_axis into rows [left] of width [right].
func lnPlan(op *ir.Op, in Args) (x, sc, bi *Tensor, left, right int64, err error) {
	if x, err = one(op, in, "X"); err != nil {
		return
	}
	b := attrInt(op, "begin_norm_axis", 1)
	if b < 1 || b > int64(x.Rank()) {
		return nil, nil, nil, 0, 0, errf(op, "begin_norm_axis %d out of range for X %v", b, x.Shape)
	}
	left, right = numel(x.Shape[:b]), numel(x.Shape[b:])
	sc, bi = opt(in, "Scale"), opt(in, "Bias")
	for _, t := range []*Tensor{sc, bi} {
		if t != nil && t.Numel() != right {
			return nil, nil, nil, 0, 0, errf(op, "Scale/Bias shape %v, want %d elements for X %v", t.Shape, right, x.Shape)
		}
	}
	return
}

// layerNorm normalises each row: Y = (x-mean)/sqrt(var+eps)*Scale + Bias,
// with Mean and Variance (biased) of shape [left] in f32 for f16 inputs as
// Paddle does, X's dtype otherwise.
func layerNorm(op *ir.Op, in Args) (Args, error) {
	x, sc, bi, left, right, err := lnPlan(op, in)
	if err != nil {
		return nil, err
	}
	eps := attrFloat(op, "epsilon", 1e-5)
	y := like(x)
	mdt := x.DType
	if mdt == ir.F16 || mdt == ir.BF16 {
		mdt = ir.F32
	}
	mu, vr := Zeros(mdt, left), Zeros(mdt, left)
	for r := range left {
		row := x.Data[r*right : (r+1)*right]
		m := 0.0
		for _, v := range row {
			m += v
		}
		m /= float64(right)
		s := 0.0
		for _, v := range row {
			s += (v - m) * (v - m)
		}
		s /= float64(right)
		inv := 1 / math.Sqrt(s+eps)
		for j, v := range row {
			o := (v - m) * inv
			if sc != nil {
				o *= sc.Data[j]
			}
			if bi != nil {
				o += bi.Data[j]
			}
			y.Data[r*right+int64(j)] = o
		}
		mu.Data[r], vr.Data[r] = m, s
	}
	return Args{"Y": {y}, "Mean": {mu}, "Variance": {vr}}, nil
}

// layerNormGrad(X, Scale, Bias, Mean, Variance, Y@GRAD) -> (X@GRAD,
// Scale@GRAD, Bias@GRAD).
func layerNormGrad(op *ir.Op, in Args) (Args, error) {
	x, sc, _, left, right, err := lnPlan(op, in)
	if err != nil {
		return nil, err
	}
	mu, err := one(op, in, "Mean")
	if err != nil {
		return nil, err
	}
	vr, err := one(op, in, "Variance")
	if err != nil {
		return nil, err
	}
	g, err := one(op, in, "Y@GRAD")
	if err != nil {
		return nil, err
	}
	if !slices.Equal(g.Shape, x.Shape) || mu.Numel() != left || vr.Numel() != left {
		return nil, errf(op, "X %v, Y@GRAD %v, Mean %v, Variance %v: shapes disagree", x.Shape, g.Shape, mu.Shape, vr.Shape)
	}
	eps := attrFloat(op, "epsilon", 1e-5)
	dx := like(x)
	dsc, dbi := Zeros(x.DType, right), Zeros(x.DType, right)
	xhat := make([]float64, right)
	dxh := make([]float64, right)
	for r := range left {
		inv := 1 / math.Sqrt(vr.Data[r]+eps)
		sumD, sumDX := 0.0, 0.0
		for j := range right {
			k := r*right + j
			xhat[j] = (x.Data[k] - mu.Data[r]) * inv
			dsc.Data[j] += g.Data[k] * xhat[j]
			dbi.Data[j] += g.Data[k]
			dxh[j] = g.Data[k]
			if sc != nil {
				dxh[j] *= sc.Data[j]
			}
			sumD += dxh[j]
			sumDX += dxh[j] * xhat[j]
		}
		n := float64(right)
		for j := range right {
			dx.Data[r*right+j] = inv * (dxh[j] - sumD/n - xhat[j]*sumDX/n)
		}
	}
	out := Args{}
	if wants(op, "X@GRAD") {
		out["X@GRAD"] = []*Tensor{dx}
	}
	if wants(op, "Scale@GRAD") && sc != nil {
		out["Scale@GRAD"] = []*Tensor{reshaped(dsc, slices.Clone(sc.Shape))}
	}
	if wants(op, "Bias@GRAD") {
		if b := opt(in, "Bias"); b != nil {
			dbi = reshaped(dbi, slices.Clone(b.Shape))
		}
		out["Bias@GRAD"] = []*Tensor{dbi}
	}
	return out, nil
}

// nnKernels are the kernels of this file, by op type.
func nnKernels() Kernels {
	return Kernels{
		"lookup_table_v2": embedding(false), "lookup_table_v2_grad": embeddingGrad(false),
		"c_embedding": embedding(true), "c_embedding_grad": embeddingGrad(true),
		"softmax_with_cross_entropy": softmaxXent, "softmax_with_cross_entropy_grad": softmaxXentGrad,
		"layer_norm": layerNorm, "layer_norm_grad": layerNormGrad,
		"dropout": dropout, "dropout_grad": dropoutGrad,
	}
}
