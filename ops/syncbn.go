package ops

import "slices"

// syncBatchNorm is Paddle's sync_batch_norm: batch_norm whose training
// statistics (and the sums its grad's X@GRAD reads) are all-reduced over
// the group ring_id names, so that every rank of a split batch
// normalises by the whole batch's. Paddle's op has no ring_id (it uses
// the default communicator, the world); distpass's lowering names the
// group of the batch's mesh dim, and 0, the world, is the default. The
// slots, attrs, shapes and sharding rule are batch_norm's, taken from
// its def in defs.
func syncBatchNorm(defs []*Def) *Def {
	i := slices.IndexFunc(defs, func(d *Def) bool { return d.Type == "batch_norm" })
	bn := defs[i]
	d := *bn
	d.Type = "sync_batch_norm"
	d.Doc = "batch_norm whose batch statistics are those of the batch split over the ranks of ring_id (all-reduced sums)"
	d.Attrs = append(slices.Clone(bn.Attrs), intAttr("ring_id", 0))
	g := *bn.Grad
	d.Grad = &g
	return &d
}
