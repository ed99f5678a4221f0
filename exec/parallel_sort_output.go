package exec

import (
	"context"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
)

// outputPipe is ParallelSort's output at more than one worker: once the
// rows are sorted, each worker gathers output batches ahead of the
// consumer, worker w batches w, w+W, w+2W, ... (W workers), each into its
// slot (a channel of one batch), and the consumer takes batch i from slot
// i mod W: the batches come in order, as the serial Sort emits them.
//
// Gathering a batch (~4K rows) takes ~100 µs; starting and joining the
// workers for every few batches, as gatherAhead does, cost as much on a
// busy machine, and the workers waited for each other and for the
// consumer. Here each worker waits only for its slot to empty: at most W
// batches wait in the slots and W more are being gathered.
//
// The workers run until the last batch is gathered, an error, or Close
// (which cancels them and waits for them, releasing what waits in the
// slots): none outlives the operator. They keep the values of the context
// of the Next that started them but not its cancellation, so that a
// cursor may read on under a later context (as ParallelHashJoin's); a
// Next whose own context ends stops them.
type outputPipe struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	slots  []chan gathered
	next   int   // the batch the consumer takes next
	n      int   // output batches in all
	err    error // the first error the consumer saw
}

type gathered struct {
	b   arrow.RecordBatch
	err error
}

// startOutput starts the output workers.
func (p *ParallelSort) startOutput(ctx context.Context) {
	size, total, workers := p.opts.BatchSize, p.rows(), len(p.inputs)
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o := &outputPipe{cancel: cancel, n: (total + size - 1) / size, slots: make([]chan gathered, workers)}
	for w := range o.slots {
		o.slots[w] = make(chan gathered, 1)
	}
	p.pipe = o
	for w := range workers {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			for i := w; i < o.n; i += workers {
				b, err := p.gatherBatch(ctx, i, w)
				select {
				case o.slots[w] <- gathered{b, err}:
				case <-ctx.Done():
					if b != nil {
						b.Release()
					}
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// gatherBatch builds output batch i as worker w; a panic becomes its
// error, as in runWorkers.
func (p *ParallelSort) gatherBatch(ctx context.Context, i, w int) (b arrow.RecordBatch, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, sqlerr.New(sqlerr.InternalError, "parallel worker: %v", r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	size := p.opts.BatchSize
	lo := i * size
	hi := min(p.rows(), lo+size)
	if p.rs != nil {
		return p.rs.gather(ctx, p, lo, hi, w)
	}
	return p.gather(ctx, p.refs[lo:hi])
}

// nextOutput is Next once the output workers run.
func (p *ParallelSort) nextOutput(ctx context.Context) (arrow.RecordBatch, error) {
	o := p.pipe
	if o.err != nil {
		return nil, o.err
	}
	if o.next >= o.n {
		return nil, io.EOF
	}
	select {
	case g := <-o.slots[o.next%len(o.slots)]:
		if g.err != nil {
			o.err = g.err
			return nil, g.err
		}
		o.next++
		return g.b, nil
	case <-ctx.Done():
		o.err = ctx.Err()
		o.cancel()
		return nil, o.err
	}
}

// stop cancels the output workers, waits for them and releases the
// batches they left in the slots.
func (o *outputPipe) stop() {
	o.cancel()
	o.wg.Wait()
	for _, s := range o.slots {
		select {
		case g := <-s:
			if g.b != nil {
				g.b.Release()
			}
		default:
		}
	}
}
