package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
)

// StreamAggregate is HashAggregate for input already ordered (or at least
// clustered) by the group keys: a group ends where the key changes, so it
// holds one open group instead of a hash table and emits each input
// batch's completed groups right away. Input that is not clustered is not
// detected: a key seen again later starts a new group.
type StreamAggregate struct {
	child Operator
	core  *aggCore
	// open is the encoded key of the open (last, unfinished) group;
	// core's group 0 is that group while hasOpen.
	open    []byte
	hasOpen bool
	done    bool
}

var _ Operator = (*StreamAggregate)(nil)

// NewStreamAggregate returns the aggregation of child grouped by groupBy,
// for child ordered by groupBy.
func NewStreamAggregate(child Operator, mem memory.Allocator, groupBy []expr.Expr, groupNames []string, aggs []AggSpec, env eval.Env, opts AggOptions) (*StreamAggregate, error) {
	core, err := newAggCore(child, mem, groupBy, groupNames, append([]AggSpec(nil), aggs...), env, opts, "stream aggregate")
	if err != nil {
		return nil, err
	}
	return &StreamAggregate{child: child, core: core}, nil
}

func (s *StreamAggregate) Schema() *arrow.Schema          { return s.core.schema }
func (s *StreamAggregate) Open(ctx context.Context) error { return s.child.Open(ctx) }

func (s *StreamAggregate) Close() error {
	s.core.releaseKeys()
	return s.child.Close()
}

// consume folds b in and returns how many leading groups are complete.
func (s *StreamAggregate) consume(ctx context.Context, b arrow.RecordBatch) error {
	keys, err := s.core.evalKeys(ctx, b)
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	rows := int(b.NumRows())
	gids := make([]int32, rows)
	var newRows []int
	enc := keyEncoder{cols: keys, types: s.core.groupTypes}
	var buf []byte
	g := int32(s.core.ngroups - 1)
	for i := 0; i < rows; i++ {
		buf = enc.encode(buf[:0], i)
		if !s.hasOpen || string(buf) != string(s.open) {
			s.open = append(s.open[:0], buf...)
			s.hasOpen = true
			g = int32(s.core.ngroups + len(newRows))
			newRows = append(newRows, i)
		}
		gids[i] = g
	}
	if err := s.core.addKeys(keys, newRows); err != nil {
		return err
	}
	if err := s.core.accumulate(ctx, b, gids); err != nil {
		return err
	}
	// Only the open group's state outlives the batch, but DISTINCT sets
	// inside one huge group still grow: hold them to the limit too.
	return s.core.budget.set(s.core.stateBytes(0))
}

// flush emits groups [0, n) and renumbers the rest (at most the open
// group) from 0.
func (s *StreamAggregate) flush(n int) (arrow.RecordBatch, error) {
	out, err := s.core.output(n)
	if err != nil {
		return nil, err
	}
	rest := s.core.ngroups - n
	if rest == 0 {
		s.core.releaseKeys()
		s.core.ngroups = 0
		for _, a := range s.core.accs {
			a.resize(0)
		}
		return out, nil
	}
	// Keep the open group's key (the last row) and state.
	for i, chunks := range s.core.keyChunks {
		last := chunks[len(chunks)-1]
		k := array.NewSlice(last, int64(last.Len()-1), int64(last.Len()))
		releaseArrays(chunks)
		s.core.keyChunks[i] = []arrow.Array{k}
	}
	s.core.keyBytes = 0
	for _, a := range s.core.accs {
		a.keep(s.core.ngroups - 1)
		if d, ok := a.(*distinctAcc); ok {
			d.bytes = 0
			for k := range d.seen[0] {
				d.bytes += int64(len(k)) + 48
			}
		}
	}
	s.core.ngroups = 1
	return out, nil
}

func (s *StreamAggregate) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.done {
			return nil, io.EOF
		}
		b, err := s.child.Next(ctx)
		if errors.Is(err, io.EOF) {
			s.done = true
			if s.core.ngroups == 0 {
				if len(s.core.groupEvs) > 0 || s.hasOpen {
					return nil, io.EOF
				}
				s.core.ngroups = 1 // global aggregate over empty input
				for _, a := range s.core.accs {
					a.resize(1)
				}
			}
			return s.flush(s.core.ngroups)
		}
		if err != nil {
			return nil, err
		}
		err = s.consume(ctx, b)
		b.Release()
		if err != nil {
			return nil, err
		}
		if complete := s.core.ngroups - 1; complete > 0 {
			return s.flush(complete)
		}
	}
}
