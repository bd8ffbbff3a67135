package sim

import (
	"runtime"
	"sync"
)

// mat addresses a matrix through two offset tables: element (r, c) is
// data[row[r]+col[c]]. The tables let one product read and write a
// convolution's operands where they lie, whatever the layout: a filter
// row-major or transposed, or a batch of images as one matrix whose
// columns are the (image, pixel) pairs.
type mat struct {
	data     []float64
	row, col []int
}

// strided returns the table off + i*step for i in [0, n).
func strided(n, off, step int) []int {
	t := make([]int, n)
	for i := range t {
		t[i] = off + i*step
	}
	return t
}

// planes returns the table of the columns (image, pixel) over images
// [0, imgs) of np pixels each, an image's first pixel at img*step.
func planes(imgs, np, step int) []int {
	t := make([]int, 0, imgs*np)
	for n := range imgs {
		for q := range np {
			t = append(t, n*step+q)
		}
	}
	return t
}

// The blocking of gemm: a micro-tile of gemmMR x gemmNR outputs lives
// in registers, a packed panel of gemmKC steps of A and B stays in the
// caches while the tiles of a gemmMC x gemmNC block use it.
const (
	gemmMR = 2
	gemmNR = 4
	gemmKC = 256
	gemmMC = 64
	gemmNC = 512
	// gemmGrain is the fewest multiply-adds worth a goroutine of their own.
	gemmGrain = 1 << 18
)

// gemm computes C = A·B (m x k times k x n), or C += A·B when acc.
//
// Each element of C is summed one product at a time, over l from 0 to
// k-1, starting from C's value (acc) or zero: the blocking and the
// split over goroutines (by rows or columns of C, never over l) change
// which element a goroutine computes, not how, so the result has the
// same bits whatever GOMAXPROCS is.
func gemm(m, n, k int, a, b, c mat, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !acc {
			for _, r := range c.row[:m] {
				for _, q := range c.col[:n] {
					c.data[r+q] = 0
				}
			}
		}
		return
	}
	work := int64(m) * int64(n) * int64(k)
	byCols := n >= m
	span, tile := m, gemmMR
	if byCols {
		span, tile = n, gemmNR
	}
	parallel(span, tile, work, func(lo, hi int) {
		a, b, c := a, b, c
		mm, nn := m, n
		if byCols {
			b.col, c.col, nn = b.col[lo:hi], c.col[lo:hi], hi-lo
		} else {
			a.row, c.row, mm = a.row[lo:hi], c.row[lo:hi], hi-lo
		}
		gemmBlock(mm, nn, k, a, b, c, acc)
	})
}

// parallel runs f over [0, n) cut into at most GOMAXPROCS ranges, each
// a multiple of tile long but the last, when work (multiply-adds) pays
// for the goroutines; otherwise it runs f(0, n).
func parallel(n, tile int, work int64, f func(lo, hi int)) {
	w := min(int64(runtime.GOMAXPROCS(0)), work/gemmGrain, int64((n+tile-1)/tile))
	if w <= 1 {
		f(0, n)
		return
	}
	tiles := (n + tile - 1) / tile
	var wg sync.WaitGroup
	for i := range int(w) {
		lo := min(n, tiles*i/int(w)*tile)
		hi := min(n, tiles*(i+1)/int(w)*tile)
		if lo < hi {
			wg.Go(func() { f(lo, hi) })
		}
	}
	wg.Wait()
}

// packBufs holds a goroutine's packed panels between gemm calls.
var packBufs = sync.Pool{New: func() any {
	return &[2][]float64{make([]float64, gemmMC*gemmKC), make([]float64, gemmKC*gemmNC)}
}}

// gemmBlock is gemm on one goroutine.
func gemmBlock(m, n, k int, a, b, c mat, acc bool) {
	bufs := packBufs.Get().(*[2][]float64)
	defer packBufs.Put(bufs)
	ap, bp := bufs[0], bufs[1]
	var t [gemmMR * gemmNR]float64
	for jc := 0; jc < n; jc += gemmNC {
		nb := min(gemmNC, n-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kb := min(gemmKC, k-pc)
			packB(bp, b, pc, kb, jc, nb)
			load := acc || pc > 0
			for ic := 0; ic < m; ic += gemmMC {
				mb := min(gemmMC, m-ic)
				packA(ap, a, ic, mb, pc, kb)
				for jr := 0; jr < nb; jr += gemmNR {
					bpan := bp[jr*kb : (jr+gemmNR)*kb]
					cols := c.col[jc+jr : jc+min(jr+gemmNR, nb)]
					for ir := 0; ir < mb; ir += gemmMR {
						rows := c.row[ic+ir : ic+min(ir+gemmMR, mb)]
						t = [gemmMR * gemmNR]float64{}
						if load {
							for i, r := range rows {
								for j, q := range cols {
									t[i*gemmNR+j] = c.data[r+q]
								}
							}
						}
						micro2x4(ap[ir*kb:(ir+gemmMR)*kb], bpan, &t)
						for i, r := range rows {
							for j, q := range cols {
								c.data[r+q] = t[i*gemmNR+j]
							}
						}
					}
				}
			}
		}
	}
}

// packA copies A's rows [ic, ic+mb) and columns [pc, pc+kb) into panels
// of gemmMR rows, each column of a panel contiguous, zero past the rows.
func packA(ap []float64, a mat, ic, mb, pc, kb int) {
	cols := a.col[pc : pc+kb]
	for ir := 0; ir < mb; ir += gemmMR {
		pan := ap[ir*kb : (ir+gemmMR)*kb]
		for i := range gemmMR {
			if ir+i >= mb {
				for l := range kb {
					pan[l*gemmMR+i] = 0
				}
				continue
			}
			row := a.data[a.row[ic+ir+i]:]
			for l, q := range cols {
				pan[l*gemmMR+i] = row[q]
			}
		}
	}
}

// packB copies B's rows [pc, pc+kb) and columns [jc, jc+nb) into panels
// of gemmNR columns, each row of a panel contiguous, zero past the
// columns.
func packB(bp []float64, b mat, pc, kb, jc, nb int) {
	rows := b.row[pc : pc+kb]
	for jr := 0; jr < nb; jr += gemmNR {
		pan := bp[jr*kb : (jr+gemmNR)*kb]
		for j := range gemmNR {
			if jr+j >= nb {
				for l := range kb {
					pan[l*gemmNR+j] = 0
				}
				continue
			}
			col := b.col[jc+jr+j]
			for l, r := range rows {
				pan[l*gemmNR+j] = b.data[r+col]
			}
		}
	}
}

// micro2x4 adds to the 2x4 tile t the product of a panel of A (two
// values a step) and one of B (four a step), a step at a time. Two
// steps an iteration keep the loop's overhead down; the order of the
// sums is the same.
func micro2x4(a, b []float64, t *[gemmMR * gemmNR]float64) {
	c00, c01, c02, c03 := t[0], t[1], t[2], t[3]
	c10, c11, c12, c13 := t[4], t[5], t[6], t[7]
	for len(a) >= 4 && len(b) >= 8 {
		a0, a1 := a[0], a[1]
		b0 := b[0]
		c00 += a0 * b0
		c10 += a1 * b0
		b1 := b[1]
		c01 += a0 * b1
		c11 += a1 * b1
		b2 := b[2]
		c02 += a0 * b2
		c12 += a1 * b2
		b3 := b[3]
		c03 += a0 * b3
		c13 += a1 * b3
		a0, a1 = a[2], a[3]
		b0 = b[4]
		c00 += a0 * b0
		c10 += a1 * b0
		b1 = b[5]
		c01 += a0 * b1
		c11 += a1 * b1
		b2 = b[6]
		c02 += a0 * b2
		c12 += a1 * b2
		b3 = b[7]
		c03 += a0 * b3
		c13 += a1 * b3
		a, b = a[4:], b[8:]
	}
	if len(a) >= 2 && len(b) >= 4 {
		a0, a1 := a[0], a[1]
		c00 += a0 * b[0]
		c10 += a1 * b[0]
		c01 += a0 * b[1]
		c11 += a1 * b[1]
		c02 += a0 * b[2]
		c12 += a1 * b[2]
		c03 += a0 * b[3]
		c13 += a1 * b[3]
	}
	t[0], t[1], t[2], t[3] = c00, c01, c02, c03
	t[4], t[5], t[6], t[7] = c10, c11, c12, c13
}
