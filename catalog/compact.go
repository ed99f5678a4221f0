package catalog

import (
	"context"
	"errors"
)

// Compact merges each run of two or more consecutive small segments
// (fewer than Options.CompactRows rows) of a table into one segment. It reads
// from a snapshot and swaps the result in with one manifest commit, so
// readers are never blocked and keep their own segments; a crash before the
// commit leaves only an orphan file, after it only obsolete ones, and Open
// deletes either. Rows keep their scan order: the merged segment takes the
// insertion position of the first segment it replaces, and the segments it
// replaces are contiguous in insertion order, so no other segment's rows
// sort between them.
func (c *Catalog) Compact(ctx context.Context, name string) error {
	c.maintMu.Lock()
	defer c.maintMu.Unlock()
	if !c.dmlMu.TryLock() {
		return nil // rows are being deleted; a later commit reschedules
	}
	defer c.dmlMu.Unlock()
	snap, err := c.Snapshot()
	if err != nil {
		return err
	}
	defer snap.Release()
	ts, err := snap.table(name)
	if err != nil {
		return err
	}
	var runs [][]segRef
	var run []segRef
	flush := func() {
		if len(run) >= 2 {
			runs = append(runs, run)
		}
		run = nil
	}
	for _, s := range ts.segs {
		if s.s.app == nil && s.n < int64(c.opts.CompactRows) {
			run = append(run, s)
		} else {
			flush()
		}
	}
	flush()
	if len(runs) == 0 {
		return nil
	}
	merged := make([]*segment, 0, len(runs))
	defer func() { discard(merged) }()
	for _, run := range runs {
		m, err := c.mergeSegments(ctx, ts.meta, run)
		if err != nil {
			return err
		}
		merged = append(merged, m)
	}
	err = c.commit(func(b *builder) error {
		name, cur := b.byID(ts.meta.id)
		if cur == nil {
			return errCompactionStale
		}
		segs := make([]segRef, 0, len(cur.segs))
		ri := 0
		for i := 0; i < len(cur.segs); i++ {
			if ri < len(runs) && cur.segs[i].s == runs[ri][0].s {
				r := runs[ri]
				if len(cur.segs)-i < len(r) {
					return errCompactionStale
				}
				for k := range r {
					if cur.segs[i+k].s != r[k].s || cur.segs[i+k].del != r[k].del {
						return errCompactionStale
					}
				}
				segs = append(segs, refOf(merged[ri]))
				if b.loggable(cur.meta) {
					b.log(walReplace)
					b.logUint(cur.meta.id)
					b.logUint(uint64(len(r)))
					for _, x := range r {
						b.logUint(x.s.id)
					}
					ms := segmentToManifest(merged[ri])
					b.logJSON(&ms)
				}
				i += len(r) - 1
				ri++
				continue
			}
			segs = append(segs, cur.segs[i])
		}
		if ri != len(runs) {
			return errCompactionStale
		}
		b.tables[name] = &tableState{meta: cur.meta, segs: segs, open: cur.open}
		return nil
	}, true)
	if errors.Is(err, errCompactionStale) {
		return nil // the table changed under us; the merged files are dropped
	}
	if err != nil {
		return err
	}
	for _, m := range merged {
		m.release() // the published state holds its own reference
	}
	merged = nil
	return nil
}

var errCompactionStale = errors.New("compaction input no longer current")

// mergeSegments writes the scan of run (merged in key order for an ordered
// table, concatenated otherwise) as one new segment positioned at run[0].
func (c *Catalog) mergeSegments(ctx context.Context, meta *tableMeta, run []segRef) (*segment, error) {
	r, err := newScanReader(ctx, c.mem, meta, run, ScanOptions{BatchSize: c.opts.BatchRows})
	if err != nil {
		return nil, err
	}
	defer r.Release()
	sw, err := c.newSegWriter(meta)
	if err != nil {
		return nil, err
	}
	for r.Next() {
		if err := sw.write(r.RecordBatch()); err != nil {
			sw.abort()
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		sw.abort()
		return nil, err
	}
	seg, err := sw.finish()
	if err != nil {
		return nil, err
	}
	seg.order = run[0].s.order
	return seg, nil
}
