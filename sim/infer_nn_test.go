package sim

// Cases for the nn family: embeddings, softmax cross entropy, layer
// norm and dropout, forward and grad.
func init() {
	inferCases = append(inferCases,
		inferCase{Name: "lookup_table_v2", IntHigh: 5, Src: `program main { block 0 {
 var ids : i64[2, 3]
 var w : f32[5, 4]
 var o : f32[-1, -1, -1]
 op 1 lookup_table_v2(Ids: ids, W: w) -> (Out: o) {padding_idx = 1}
}}`},
		inferCase{Name: "lookup_table_v2_grad", IntHigh: 5, Src: `program main { block 0 {
 var ids : i32[3]
 var w : f32[5, 4]
 var g : f32[3, 4]
 var dw : f32[-1, -1]
 op 1 lookup_table_v2_grad(Ids: ids, W: w, Out@GRAD: g) -> (W@GRAD: dw) {padding_idx = -1}
}}`},
		inferCase{Name: "c_embedding", IntHigh: 9, Src: `program main { block 0 {
 var ids : i64[2, 3]
 var w : f32[4, 6]
 var o : f32[-1, -1, -1]
 op 1 c_embedding(Ids: ids, W: w) -> (Out: o) {start_index = 4}
}}`},
		inferCase{Name: "c_embedding_grad", IntHigh: 9, Src: `program main { block 0 {
 var ids : i64[2, 3]
 var w : f32[4, 6]
 var g : f32[2, 3, 6]
 var dw : f32[-1, -1]
 op 1 c_embedding_grad(Ids: ids, W: w, Out@GRAD: g) -> (W@GRAD: dw) {start_index = 4}
}}`},
		inferCase{Name: "softmax_with_cross_entropy", IntHigh: 5, Src: `program main { block 0 {
 var x : f32[2, 3, 5]
 var l : i64[2, 3, 1]
 var sm : f32[-1, -1, -1]
 var loss : f32[-1, -1, -1]
 op 1 softmax_with_cross_entropy(Logits: x, Label: l) -> (Softmax: sm, Loss: loss) {axis = -1, ignore_index = -100, soft_label = false}
}}`},
		inferCase{Name: "softmax_with_cross_entropy/axis", IntHigh: 3, Src: `program main { block 0 {
 var x : f64[2, 3, 5]
 var l : i64[2, 1, 5]
 var sm : f64[-1, -1, -1]
 var loss : f64[-1, -1, -1]
 op 1 softmax_with_cross_entropy(Logits: x, Label: l) -> (Softmax: sm, Loss: loss) {axis = 1}
}}`},
		inferCase{Name: "softmax_with_cross_entropy_grad", IntHigh: 5, Src: `program main { block 0 {
 var l : i64[4, 1]
 var sm : f32[4, 5]
 var g : f32[4, 1]
 var dx : f32[-1, -1]
 op 1 softmax_with_cross_entropy_grad(Label: l, Softmax: sm, Loss@GRAD: g) -> (Logits@GRAD: dx) {axis = -1}
}}`},
		inferCase{Name: "layer_norm", Src: `program main { block 0 {
 var x : f32[2, 3, 4]
 var s : f32[4]
 var b : f32[4]
 var y : f32[-1, -1, -1]
 var m : f32[-1]
 var v : f32[-1]
 op 1 layer_norm(X: x, Scale: s, Bias: b) -> (Y: y, Mean: m, Variance: v) {begin_norm_axis = 2, epsilon = 1e-05}
}}`},
		inferCase{Name: "layer_norm/f16_no_affine", Src: `program main { block 0 {
 var x : f16[2, 3, 4]
 var y : f16[-1, -1, -1]
 var m : f32[-1]
 var v : f32[-1]
 op 1 layer_norm(X: x) -> (Y: y, Mean: m, Variance: v) {begin_norm_axis = 1}
}}`},
		inferCase{Name: "layer_norm_grad", Src: `program main { block 0 {
 var x : f64[2, 3, 4]
 var s : f64[12]
 var b : f64[12]
 var m : f64[2]
 var v : f64[2]
 var g : f64[2, 3, 4]
 var dx : f64[-1, -1, -1]
 var ds : f64[-1]
 var db : f64[-1]
 op 1 layer_norm_grad(X: x, Scale: s, Bias: b, Mean: m, Variance: v, Y@GRAD: g) -> (X@GRAD: dx, Scale@GRAD: ds, Bias@GRAD: db) {begin_norm_axis = 1}
}}`},
		inferCase{Name: "dropout", Src: `program main { block 0 {
 var x : f32[3, 4]
 var o : f32[-1, -1]
 var m : u8[-1, -1]
 op 1 dropout(X: x) -> (Out: o, Mask: m) {dropout_prob = 0.3, dropout_implementation = "upscale_in_train", seed = 5}
}}`},
		inferCase{Name: "dropout/is_test", Src: `program main { block 0 {
 var x : f64[3, 4, 2]
 var o : f64[-1, -1, -1]
 var m : u8[-1, -1, -1]
 op 1 dropout(X: x) -> (Out: o, Mask: m) {dropout_prob = 0.5, is_test = true}
}}`},
		inferCase{Name: "dropout_grad", Src: `program main { block 0 {
 var m : u8[3, 4]
 var g : f32[3, 4]
 var dx : f32[-1, -1]
 op 1 dropout_grad(Mask: m, Out@GRAD: g) -> (X@GRAD: dx) {dropout_prob = 0.3, dropout_implementation = "upscale_in_train"}
}}`},
	)
}
