package ir

import (
	"runtime"

	"github.com/distpass/distpass/internal/par"
)

// Blocks with many statements are printed in pieces on every core: each
// piece of consecutive var declarations and ops goes to its own buffer,
// and the buffers are written in order, so the bytes are those of the
// sequential printer. A window of pieces is printed at a time, then
// written, which keeps Fprint's memory independent of the module's size.

// Tuning of the parallel printer; tests lower them.
var (
	printPieceMin  = 8192 // statements in a block below which it prints sequentially
	printPieceSize = 2048 // statements per piece
	printWorkers   = func() int { return runtime.GOMAXPROCS(0) }
)

// statements prints the var declarations and ops of b.
func (p *printer) statements(b *Block) {
	n := len(b.vars) + len(b.Ops)
	workers := printWorkers()
	if n < printPieceMin || workers < 2 {
		p.statementRange(b, 0, n)
		return
	}
	pieces := (n + printPieceSize - 1) / printPieceSize
	if len(p.pieces) < 2*workers {
		p.pieces = make([][]byte, 2*workers) // a window, reused by the print's blocks
	}
	bufs := p.pieces[:min(pieces, 2*workers)]
	for lo := 0; lo < pieces; lo += len(bufs) {
		hi := min(pieces, lo+len(bufs))
		par.Do(hi-lo, workers, func(k int) {
			if bufs[k] == nil {
				// Room for a piece of long statements (an op with its
				// dist line prints some 360 bytes): seldom regrown.
				bufs[k] = make([]byte, 0, 512*printPieceSize)
			}
			q := printer{buf: bufs[k][:0]}
			i := lo + k
			q.statementRange(b, i*printPieceSize, min(n, (i+1)*printPieceSize))
			bufs[k] = q.buf
		})
		for _, buf := range bufs[:hi-lo] {
			if p.w == nil {
				p.buf = append(p.buf, buf...)
				continue
			}
			p.flush()
			if p.err == nil {
				_, p.err = p.w.Write(buf)
				p.out += len(buf)
			}
		}
	}
}

// statementRange prints statements [from, to) of b: its vars, then its ops.
func (p *printer) statementRange(b *Block, from, to int) {
	nv := len(b.vars)
	for i := from; i < to; i++ {
		p.str("    ")
		if i < nv {
			p.varDecl(b.vars[i])
		} else {
			p.op(b.Ops[i-nv], 4)
		}
		p.line()
	}
}
