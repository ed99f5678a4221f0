package exec

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
)

// Morsels hands the batches of one operator (the morsels) to the workers
// of a parallel operator: each morsel to one worker, numbered in input
// order, without copying. A worker takes its next morsel when it is done
// with the last, so the work balances itself, and each worker's morsels
// arrive in increasing sequence: a worker's rows keep the input's order,
// and (sequence, row) orders all rows as the serial input does.
//
// The child is opened and closed by the parallel operator that owns the
// Morsels; the workers read it through their MorselViews, one at a time.
type Morsels struct {
	mu    sync.Mutex
	child Operator
	seq   int64
	err   error // sticky: a failed child fails every later take
	done  bool
}

// NewMorsels returns a morsel source over child; it takes ownership of
// child.
func NewMorsels(child Operator) *Morsels { return &Morsels{child: child} }

// View returns a worker's reader of the morsels.
func (m *Morsels) View() *MorselView { return &MorselView{src: m} }

func (m *Morsels) open(ctx context.Context) error { return m.child.Open(ctx) }
func (m *Morsels) close() error                   { return m.child.Close() }

// take returns the next non-empty batch and its sequence number, io.EOF at
// the end.
func (m *Morsels) take(ctx context.Context) (arrow.RecordBatch, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, 0, m.err
	}
	if m.done {
		return nil, 0, io.EOF
	}
	for {
		b, err := m.child.Next(ctx)
		if errors.Is(err, io.EOF) {
			m.done = true
			return nil, 0, io.EOF
		}
		if err != nil {
			m.err = err
			return nil, 0, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		seq := m.seq
		m.seq++
		return b, seq, nil
	}
}

// MorselView is one worker's reader of a Morsels: an Operator over the
// morsels handed to this worker. Seq is the sequence number of the batch
// Next returned last; the operators between the view and the parallel
// operator (filters, projections) yield at most one batch per morsel, in
// turn, so that is also the sequence of the batch they returned last.
type MorselView struct {
	src *Morsels
	seq int64
}

var _ Operator = (*MorselView)(nil)

// Schema is the child's.
func (v *MorselView) Schema() *arrow.Schema { return v.src.child.Schema() }

// Open does nothing: the owner of the Morsels opens its child once.
func (v *MorselView) Open(context.Context) error { return nil }

// Close does nothing: the owner of the Morsels closes its child once.
func (v *MorselView) Close() error { return nil }

func (v *MorselView) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, seq, err := v.src.take(ctx)
	if err != nil {
		return nil, err
	}
	v.seq = seq
	return b, nil
}

// Seq is the sequence number of the last morsel Next returned.
func (v *MorselView) Seq() int64 { return v.seq }

// runWorkers runs work(ctx, w) for w in [0, n) on n goroutines and waits
// for all of them: none outlives the call. The first error cancels the
// others' context and is returned (a cancellation of ctx itself wins over
// the context errors it causes in the workers).
func runWorkers(ctx context.Context, n int, work func(ctx context.Context, w int) error) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := func() (err error) {
				// A panic on a worker would end the process: it becomes
				// the query's error instead, as on the serial path.
				defer func() {
					if r := recover(); r != nil {
						err = sqlerr.New(sqlerr.InternalError, "parallel worker: %v", r)
					}
				}()
				return work(wctx, w)
			}()
			if err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return first
}
