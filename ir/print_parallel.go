package ir

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Blocks with many statements are printed in pieces on every core: each
// piece of consecutive var declarations and ops goes to its own buffer,
// and the buffers are written in order, so the bytes are those of the
// sequential printer. At most a window of pieces is in flight, which
// keeps Fprint's memory independent of the module's size.

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
	workers = min(workers, pieces)
	window := 2 * workers
	tokens := make(chan struct{}, window)
	for range window {
		tokens <- struct{}{}
	}
	results := make([]chan []byte, pieces)
	for i := range results {
		results[i] = make(chan []byte, 1)
	}
	free := make(chan []byte, window)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				<-tokens
				i := int(next.Add(1) - 1)
				if i >= pieces {
					return
				}
				var q printer
				select {
				case q.buf = <-free:
				default:
					q.buf = getPieceBuf()
				}
				q.statementRange(b, i*printPieceSize, min(n, (i+1)*printPieceSize))
				results[i] <- q.buf
			}
		})
	}
	// Every piece is taken, even after a write error, so that the workers
	// end; a worker holds at most one token and each exits on one more,
	// and the window is twice the workers.
	for i := range pieces {
		buf := <-results[i]
		if p.w == nil {
			p.buf = append(p.buf, buf...)
		} else {
			p.flush()
			if p.err == nil {
				_, p.err = p.w.Write(buf)
				p.out += len(buf)
			}
		}
		select {
		case free <- buf[:0]:
		default:
			putPieceBuf(buf)
		}
		tokens <- struct{}{}
	}
	wg.Wait()
	for {
		select {
		case buf := <-free:
			putPieceBuf(buf)
		default:
			return
		}
	}
}

// pieceBufs keeps the pieces' buffers from one print to the next: fresh
// memory is faulted in page by page, which on a virtual machine cost a
// 10,000-op print more than its second core saved.
var pieceBufs sync.Pool

// getPieceBuf returns an empty buffer with room for a piece of long
// statements (an op with its dist line prints some 360 bytes); a piece
// that outgrows it copies it.
func getPieceBuf() []byte {
	if b, ok := pieceBufs.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 512*printPieceSize)
}

// putPieceBuf keeps buf for a later piece, unless a piece of very long
// statements grew it well past the usual size.
func putPieceBuf(buf []byte) {
	if cap(buf) <= 4*512*printPieceSize {
		pieceBufs.Put(&buf)
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
