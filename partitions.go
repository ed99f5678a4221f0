package asofsql

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// ExecutePartitions runs the statement as several cursors, each over a
// contiguous part of the rows of the table driving its result, when the
// result is a row-wise function of that one stored table's rows in their
// stored order (scans, filters, projections and ASOF joins off its left
// side; planner.Partition); it gives one cursor otherwise, as Execute. The
// number of parts is at most the session's max_parallel_workers_per_gather
// (each part runs serially: the parts are the parallelism), the degree a
// gather over the driving table would get (planner.PartitionDegree: one
// part below min_parallel_table_scan_size). All the
// cursors read one snapshot, hold it until each is released, and may be
// read concurrently from different goroutines, in any order; their rows
// concatenated in order are exactly the single cursor's. Each cursor has
// its own statement_timeout and memory account, and runs under
// part(i) (its parent context: cancelling it stops that cursor alone),
// or ctx when part is nil; ctx is what planning observes. Outside a
// transaction block only: inside one the statement runs as Execute.
func (st *Stmt) ExecutePartitions(ctx context.Context, part func(i int) context.Context, args ...any) ([]*Cursor, error) {
	s := st.s
	if s.workers < 2 || st.st == nil || st.viaPrepare || st.first != nil || st.copy != nil || s.tx != nil || s.failed {
		return st.executeOne(ctx, args)
	}
	s.setTxStart() // every part's now() is the statement's
	parts, snap, params, tag, err := st.partitionPlan(ctx)
	if err != nil {
		return nil, err
	}
	if parts == nil {
		return st.executeOne(ctx, args)
	}
	defer snap.Release()
	out := make([]*Cursor, 0, len(parts))
	fail := func(err error) ([]*Cursor, error) {
		for _, c := range out {
			c.Release()
		}
		return nil, s.fail(err)
	}
	for i, root := range parts {
		pctx := ctx
		if part != nil {
			pctx = part(i)
		}
		c, err := st.openPart(pctx, snap, params, tag, root, args)
		if err != nil {
			return fail(err)
		}
		out = append(out, c)
	}
	return out, nil
}

func (st *Stmt) executeOne(ctx context.Context, args []any) ([]*Cursor, error) {
	c, err := st.Execute(ctx, args...)
	if err != nil {
		return nil, err
	}
	return []*Cursor{c}, nil
}

// partitionPlan plans the statement serially on a new snapshot and cuts
// it into parts; parts is nil (and nothing held) when it is not row-wise.
func (st *Stmt) partitionPlan(ctx context.Context) (parts []planner.Node, snap *snapshot, params []sqltypes.Type, tag string, err error) {
	s := st.s
	snap, err = s.snapshot()
	if err != nil {
		return nil, nil, nil, "", err
	}
	pctx, cancel := s.statementContext(ctx)
	defer cancel()
	opts := s.planOptions(st.declared)
	opts.Workers = 1
	p, err := planner.BuildContext(pctx, s.planCatalog(snap), st.st, opts)
	if err != nil {
		snap.Release()
		return nil, nil, nil, "", s.fail(cancelErr(ctx, pctx, err))
	}
	if st.described && !sameShape(st, p.Shape().Params, p.Shape()) {
		snap.Release()
		return nil, nil, nil, "", s.fail(sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type"))
	}
	q, ok := p.(*planner.Query)
	if ok {
		n := planner.PartitionDegree(q.Root, s.workers, s.minParallel)
		parts, err = planner.Partition(q.Root, n, storedRows{pctx, snap})
		if err != nil {
			snap.Release()
			return nil, nil, nil, "", s.fail(cancelErr(ctx, pctx, err))
		}
	}
	if parts == nil {
		snap.Release()
		return nil, nil, nil, "", nil
	}
	return parts, snap, q.Params, q.Tag(), nil
}

// openPart starts one part on its own reference to snap, with its own
// statement context and memory account.
func (st *Stmt) openPart(parent context.Context, snap *snapshot, params []sqltypes.Type, tag string, root planner.Node, args []any) (*Cursor, error) {
	s := st.s
	ctx, cancel := s.statementContext(parent)
	ctx, cancel, err := s.account(ctx, cancel, st.Text())
	if err != nil {
		cancel()
		return nil, err
	}
	own, err := snap.Clone()
	if err != nil {
		cancel()
		return nil, err
	}
	op, err := s.lowerQuery(ctx, own, params, root, args, nil)
	if err == nil {
		if err = op.Open(ctx); err != nil {
			op.Close()
		}
	}
	if err != nil {
		err = cancelErr(parent, ctx, err)
		own.Release()
		cancel()
		return nil, err
	}
	return rowsCursor(ctx, parent, op, tag, own.Release, cancel), nil
}

// storedRows reads the tables of snap for planner.Partition: scans of one
// column, the rows before the wanted one passed over batch by batch (a
// stored batch comes out as a slice of its segment, without a copy).
type storedRows struct {
	ctx  context.Context
	snap *snapshot
}

func (r storedRows) scan(s *planner.Scan, col int, rg *catalog.Range) (array.RecordReader, error) {
	cs := r.snap.main
	if s.Table.Temp {
		cs = r.snap.temp
	}
	if cs == nil {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", s.Table.Name)
	}
	return cs.Scan(r.ctx, s.Table.Name, catalog.ScanOptions{Columns: []int{col}, Range: rg})
}

func (r storedRows) ValueAt(s *planner.Scan, col int, row int64) (int64, bool, error) {
	rdr, err := r.scan(s, col, s.Range)
	if err != nil {
		return 0, false, err
	}
	defer rdr.Release()
	for rdr.Next() {
		b := rdr.RecordBatch()
		if row >= b.NumRows() {
			row -= b.NumRows()
			continue
		}
		i := int(row)
		if b.Column(0).IsNull(i) {
			return 0, false, nil
		}
		switch a := b.Column(0).(type) {
		case *array.Int64:
			return a.Value(i), true, nil
		case *array.Int32:
			return int64(a.Value(i)), true, nil
		case *array.Int16:
			return int64(a.Value(i)), true, nil
		case *array.Date32:
			return int64(a.Value(i)), true, nil
		case *array.Timestamp:
			return int64(a.Value(i)), true, nil
		}
		return 0, false, nil
	}
	return 0, false, rdr.Err()
}

func (r storedRows) Count(s *planner.Scan) (int64, error) {
	rdr, err := r.scan(s, s.Table.OrderKeys[0], s.Range) // a Range is on an ordered table
	if err != nil {
		return 0, err
	}
	return countRows(rdr)
}

func (r storedRows) RowsBefore(s *planner.Scan, v int64) (int64, error) {
	if s.Range != nil || len(s.Table.OrderKeys) == 0 {
		return 0, nil // not a prefix of the stored order: skip nothing
	}
	rdr, err := r.scan(s, s.Table.OrderKeys[0], &catalog.Range{Hi: v, HiExclusive: true})
	if err != nil {
		return 0, err
	}
	return countRows(rdr)
}

// countRows reads rdr to its end and releases it.
func countRows(rdr array.RecordReader) (int64, error) {
	defer rdr.Release()
	n := int64(0)
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	return n, rdr.Err()
}
