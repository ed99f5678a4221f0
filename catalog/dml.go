package catalog

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
)

// Predicate selects rows of a batch holding every column of the table (in
// the table's column order): it returns a Boolean array of the batch's
// length, true for rows that match (false and NULL do not). The catalog
// releases the array.
type Predicate func(ctx context.Context, rec arrow.RecordBatch) (arrow.Array, error)

// DeleteOptions choose the rows DELETE removes: those whose first ordering
// key lies in Range (ordered tables only; nil: every row) and for which
// Where holds (nil: every row in Range).
type DeleteOptions struct {
	Range *Range
	Where Predicate
}

// UpdateOptions choose the rows UPDATE changes (as DeleteOptions) and how.
type UpdateOptions struct {
	Range *Range
	Where Predicate
	// Set computes the new rows from the old: given a batch of matched
	// rows (every column, table order) it returns a batch of as many rows
	// typed as the table, which the caller of Update no longer owns.
	Set func(ctx context.Context, old arrow.RecordBatch) (arrow.RecordBatch, error)
}

// Delete removes rows of a table as of the statement's start (the last
// committed state with the transaction's own changes on top, Tx.View) and
// returns how many. Rows the transaction added itself are taken out of
// what it will commit.
//
// Retention is cheap: without Where, a segment whose key range [min, max]
// lies inside Range and which holds no NULL key is dropped without being
// read; only segments straddling a bound are read, and their deleted rows
// are recorded in a deletion mask (scans skip them; compaction and
// checkpoints leave them out of what they write). The commit fails with
// 40001 if a transaction that committed first deleted or updated one of the
// same rows.
func (tx *Tx) Delete(ctx context.Context, name string, opts DeleteOptions) (int64, error) {
	n, _, err := tx.modify(ctx, name, opts.Range, opts.Where, nil)
	return n, err
}

// Update replaces matching rows by Set's result: a delete of the old rows
// and an insert of the new ones in one statement. The new rows are
// inserted in the old rows' scan order, so in an ordered table rows whose
// new keys are equal keep their previous relative order (a stable sort by
// the new key). Conflicts as for Delete.
func (tx *Tx) Update(ctx context.Context, name string, opts UpdateOptions) (int64, error) {
	if opts.Set == nil {
		return 0, tx.fail(sqlerr.New(sqlerr.InternalError, "UPDATE of %q without SET", name))
	}
	n, _, err := tx.modify(ctx, name, opts.Range, opts.Where, opts.Set)
	return n, err
}

func (tx *Tx) modify(ctx context.Context, name string, rng *Range, where Predicate,
	set func(context.Context, arrow.RecordBatch) (arrow.RecordBatch, error)) (int64, bool, error) {
	if err := tx.begin(ctx); err != nil {
		return 0, false, err
	}
	meta, err := tx.target(name)
	if err != nil {
		return 0, false, tx.fail(err)
	}
	if rng != nil && !meta.ordered() {
		return 0, false, tx.fail(sqlerr.New(sqlerr.InvalidParameterValue, "range delete of relation %q needs an ordered table", name))
	}
	tx.holdDML()
	base, err := tx.c.Snapshot()
	if err != nil {
		return 0, false, tx.fail(err)
	}
	// The statement reads the last committed state with the
	// transaction's own changes on top (its deletes, truncates and rows).
	st, private, err := tx.viewState(base)
	base.Release()
	if err != nil {
		return 0, false, tx.fail(err)
	}
	snap := &Snapshot{c: tx.c, st: st}
	tx.snaps = append(tx.snaps, snap)
	ts := snap.st.tables[name]
	if ts == nil || ts.meta.id != meta.id {
		return 0, false, nil
	}
	refs := slices.Clone(ts.segs)
	dels := map[*segment][]int64{}
	whole := map[*segment]*delMask{}
	var count int64
	var scan []segRef
	var lo, hi any
	if rng != nil {
		t := meta.def.Columns[meta.keys[0]].Type
		if rng.Lo != nil {
			if lo, err = keyValue(t, rng.Lo); err != nil {
				return 0, false, tx.fail(err)
			}
		}
		if rng.Hi != nil {
			if hi, err = keyValue(t, rng.Hi); err != nil {
				return 0, false, tx.fail(err)
			}
		}
	}
	for _, r := range refs {
		if r.live() == 0 {
			continue
		}
		if where == nil && set == nil && (rng == nil || inside(r.st, lo, hi, rng)) {
			whole[r.s] = complement(r.del, r.n)
			if r.s.app == nil && private[r.s] == nil {
				tx.c.segsDropped.Add(1)
			}
			count += r.live()
			continue
		}
		scan = append(scan, r)
	}
	w := (*tableWriter)(nil)
	if set != nil {
		w = tx.c.newTableWriter(meta)
	}
	err = func() error {
		if len(scan) == 0 {
			return nil
		}
		r, err := newScanReader(ctx, tx.c.mem, meta, scan, ScanOptions{Range: rng, BatchSize: tx.c.opts.BatchRows})
		if err != nil {
			return err
		}
		r.wantIDs = true
		defer r.Release()
		for r.Next() {
			rec := r.RecordBatch()
			match, err := evalWhere(ctx, where, rec)
			if err != nil {
				return err
			}
			var idx []int32
			for i, id := range r.ids {
				if match == nil || (match.IsValid(i) && match.Value(i)) {
					s := scan[id.seg].s
					dels[s] = append(dels[s], id.pos)
					idx = append(idx, int32(i))
				}
			}
			if match != nil {
				match.Release()
			}
			count += int64(len(idx))
			if set != nil && len(idx) > 0 {
				if err := tx.updateRows(ctx, w, rec, idx, set); err != nil {
					return err
				}
			}
		}
		return r.Err()
	}()
	if err != nil {
		if w != nil {
			w.abort()
		}
		return 0, false, tx.fail(err)
	}
	op := txOp{kind: opDelete, meta: meta, dels: whole}
	for s, pos := range dels {
		slices.Sort(pos)
		op.dels[s] = maskFromPositions(pos)
	}
	// The transaction's own rows are edited where they wait, not deleted
	// from a segment that was never committed.
	edited := false
	for s, m := range op.dels {
		if p := private[s]; p != nil {
			tx.dropPending(p, m)
			delete(op.dels, s)
			edited = true
		}
	}
	if edited { // operations left without rows have nothing to commit
		tx.dropPrivate()
		tx.ops = slices.DeleteFunc(tx.ops, func(op txOp) bool { return op.kind == opAppend && op.nrows == 0 })
	}
	if len(op.dels) > 0 {
		tx.ops = append(tx.ops, op)
	}
	if w != nil {
		if _, err := tx.endWrite(meta, w, nil); err != nil {
			return 0, false, err
		}
	}
	return count, true, nil
}

// updateRows computes and buffers the new versions of rows idx of rec.
func (tx *Tx) updateRows(ctx context.Context, w *tableWriter, rec arrow.RecordBatch, idx []int32,
	set func(context.Context, arrow.RecordBatch) (arrow.RecordBatch, error)) error {
	old := rec
	if len(idx) != int(rec.NumRows()) {
		old = gatherBatch(tx.c.mem, rec, idx)
		defer old.Release()
	}
	nw, err := set(ctx, old)
	if err != nil {
		return err
	}
	defer nw.Release()
	if nw.NumRows() != old.NumRows() {
		return sqlerr.New(sqlerr.InternalError, "UPDATE of %q: SET returned %d rows for %d", w.meta.def.Name, nw.NumRows(), old.NumRows())
	}
	if err := w.checkShape(nw); err != nil {
		return err
	}
	return w.add(nw)
}

func evalWhere(ctx context.Context, where Predicate, rec arrow.RecordBatch) (*array.Boolean, error) {
	if where == nil {
		return nil, nil
	}
	a, err := where(ctx, rec)
	if err != nil {
		return nil, err
	}
	b, ok := a.(*array.Boolean)
	if !ok || b.Len() != int(rec.NumRows()) {
		a.Release()
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of WHERE must be a boolean of one value per row")
	}
	return b, nil
}

// inside reports whether every row of a segment has its first key in the
// range (so it can go without being read).
func inside(st *segStats, lo, hi any, r *Range) bool {
	if st.keyNulls != 0 || st.min == nil {
		return false // NULL keys are never in a range, or unknown
	}
	if lo != nil {
		c := compareValues(st.min, lo)
		if c < 0 || (c == 0 && r.LoExclusive) {
			return false
		}
	}
	if hi != nil {
		c := compareValues(st.max, hi)
		if c > 0 || (c == 0 && r.HiExclusive) {
			return false
		}
	}
	return true
}

// complement is the mask of [0, n) less m.
func complement(m *delMask, n int64) *delMask {
	var out []posRange
	p := int64(0)
	for _, x := range m.within(0, n) {
		if x.lo > p {
			out = append(out, posRange{p, x.lo})
		}
		p = x.hi
	}
	if p < n {
		out = append(out, posRange{p, n})
	}
	return maskFromRanges(out)
}

// Truncate removes every row of a table (TRUNCATE): at commit, all rows
// committed by then, whatever the transaction's snapshot saw, as
// PostgreSQL's TRUNCATE does after taking its exclusive lock.
func (tx *Tx) Truncate(ctx context.Context, name string) error {
	if err := tx.begin(ctx); err != nil {
		return err
	}
	meta, err := tx.target(name)
	if err != nil {
		return tx.fail(err)
	}
	tx.holdDML()
	// Rows this transaction wrote to the table before go too.
	tx.dropPrivate()
	for i := range tx.ops {
		op := &tx.ops[i]
		if op.meta != nil && op.meta.id == meta.id && (op.kind == opAppend || op.kind == opAttach) {
			op.release()
			op.kind = opTruncate
		}
	}
	tx.ops = append(tx.ops, txOp{kind: opTruncate, meta: meta})
	return nil
}

// dropPending removes the rows at positions m of a view's private segment
// p (the rows of p.ops concatenated) from those operations' rows.
func (tx *Tx) dropPending(p *pendingSeg, m *delMask) {
	var off int64
	for _, i := range p.ops {
		op := &tx.ops[i]
		end := off + op.nrows
		gone := m.within(off, end)
		if len(gone) == 0 {
			off = end
			continue
		}
		var kept []arrow.RecordBatch
		var n int64
		bOff := off
		for _, rec := range op.rows {
			bEnd := bOff + rec.NumRows()
			var idx []int32
			for pos := bOff; pos < bEnd; pos++ {
				if !m.has(pos) {
					idx = append(idx, int32(pos-bOff))
				}
			}
			switch len(idx) {
			case 0:
				rec.Release()
			case int(rec.NumRows()):
				kept = append(kept, rec)
			default:
				kept = append(kept, gatherBatch(tx.c.mem, rec, idx))
				rec.Release()
			}
			n += int64(len(idx))
			bOff = bEnd
		}
		op.rows, op.nrows = kept, n
		off = end
	}
}
