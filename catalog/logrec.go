package catalog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
)

// Log record operations. A record is the ops of one commit, in statement
// order. Each op names tables and segments by id, and replay applies it
// like the commit did, skipping an op whose effect the checkpoint's
// manifest already holds (a segment already listed, a table or segment
// already gone), so replaying a record twice is harmless.
const (
	walCreate   = 1 // JSON table definition
	walDrop     = 2 // table id
	walAppend   = 3 // table id, append segment id, its order, batches
	walAttach   = 4 // table id, JSON segment descriptions (fsynced files)
	walDelete   = 5 // table id, per segment id the deleted position ranges
	walTruncate = 6 // table id
	walMeta     = 7 // JSON table definition (ALTER TABLE, rename)
	walReplace  = 8 // table id, replaced segment ids, JSON new segment (compaction)
	walView     = 9 // JSON view definition
	walDropView = 10
)

func (b *builder) log(kind byte) {
	b.logged = true
	b.rec = append(b.rec, kind)
}

func (b *builder) logUint(v uint64) { b.rec = binary.AppendUvarint(b.rec, v) }

func (b *builder) logBytes(p []byte) {
	b.logUint(uint64(len(p)))
	b.rec = append(b.rec, p...)
}

func (b *builder) logJSON(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("catalog: log record encoding: %v", err)) // plain structs always encode
	}
	b.logBytes(data)
}

// loggable reports whether changes to a table go to the log.
func (b *builder) loggable(meta *tableMeta) bool { return !b.replay && !meta.temp && b.c.wal != nil }

// find resolves the table a statement wrote in the state being built.
func (b *builder) find(meta *tableMeta) (string, *tableState, error) {
	name, ts := b.byID(meta.id)
	if ts == nil {
		return "", nil, sameTable(b.tables[meta.def.Name], meta)
	}
	return name, ts, nil
}

// applyOp applies one statement of a committing transaction.
func (b *builder) applyOp(op *txOp) error {
	switch op.kind {
	case opCreate:
		name := op.meta.def.Name
		if b.tables[name] != nil || b.views[name] != nil {
			return errDupTable(name)
		}
		b.tables[name] = &tableState{meta: op.meta}
		if b.loggable(op.meta) {
			b.log(walCreate)
			b.logJSON(tableToManifest(op.meta))
		}
	case opDrop:
		name, _, err := b.find(op.meta)
		if err != nil {
			return err
		}
		delete(b.tables, name)
		if b.loggable(op.meta) {
			b.log(walDrop)
			b.logUint(op.meta.id)
		}
	case opAppend:
		name, ts, err := b.find(op.meta)
		if err != nil {
			return err
		}
		if err := sameColumns(ts, op.meta); err != nil {
			return err
		}
		b.appendRows(name, ts, op.rows, op.nrows, 0, 0)
	case opAttach:
		name, ts, err := b.find(op.meta)
		if err != nil {
			return err
		}
		for _, s := range op.segs {
			s.order = b.c.nextOrder.Add(1)
		}
		b.attach(name, ts, op.segs)
		if b.loggable(op.meta) {
			b.log(walAttach)
			b.logUint(op.meta.id)
			b.logJSON(segmentsToManifest(op.segs))
		}
	case opDelete:
		name, ts, err := b.find(op.meta)
		if err != nil {
			return err
		}
		if err := b.deleteRows(name, ts, op.dels, true); err != nil {
			return err
		}
		if b.loggable(op.meta) {
			b.log(walDelete)
			b.logUint(op.meta.id)
			b.logDeletes(op.dels)
		}
	case opTruncate:
		name, ts, err := b.find(op.meta)
		if err != nil {
			return err
		}
		b.tables[name] = &tableState{meta: ts.meta}
		if b.loggable(op.meta) {
			b.log(walTruncate)
			b.logUint(op.meta.id)
		}
	case opAlter:
		name, ts, err := b.find(op.meta)
		if err != nil {
			return err
		}
		if ts.meta != op.meta {
			return sqlerr.New(codeSerializationFailure, "could not serialize access: relation %q was altered by a concurrent transaction", op.meta.def.Name)
		}
		if err := b.setMeta(name, ts, op.next); err != nil {
			return err
		}
		if b.loggable(op.meta) {
			b.log(walMeta)
			b.logJSON(tableToManifest(op.next))
		}
	case opView:
		name := op.vdef.Name
		if b.tables[name] != nil {
			return errDupTable(name)
		}
		b.views[name] = op.vdef
		if !b.replay && b.c.wal != nil {
			b.log(walView)
			b.logJSON(op.vdef)
		}
	case opDropView:
		if b.views[op.name] == nil {
			return sqlerr.New(sqlerr.UndefinedTable, "view %q was dropped by a concurrent transaction", op.name)
		}
		delete(b.views, op.name)
		if !b.replay && b.c.wal != nil {
			b.log(walDropView)
			b.logBytes([]byte(op.name))
		}
	}
	return nil
}

// appendRows adds a small statement's rows to the table's open append
// segment, starting one (id, order from the counters, or from the log on
// replay) when there is none or it is full.
func (b *builder) appendRows(name string, ts *tableState, rows []arrow.RecordBatch, n int64, segID, order uint64) {
	meta := ts.meta
	segs := slices.Clone(ts.segs)
	var ref segRef
	open := ts.open
	if segID != 0 {
		// Replay names the segment.
		open = nil
		if k := slices.IndexFunc(segs, func(r segRef) bool { return r.s.id == segID }); k >= 0 {
			ref, open = segs[k], segs[k].s
			segs = slices.Delete(segs, k, k+1)
		}
	} else if open != nil {
		if open.app.sealed || len(segs) == 0 || segs[len(segs)-1].s != open || segs[len(segs)-1].n >= int64(b.c.opts.CompactRows) {
			// Full: a scan sorts an append segment's rows after each
			// change, so keep that bounded; the sealed one's sorted view
			// stays cached.
			open = nil
		} else {
			ref = segs[len(segs)-1]
			segs = segs[:len(segs)-1]
		}
	}
	if open == nil {
		if segID == 0 {
			segID, order = b.c.nextSegID.Add(1), b.c.nextOrder.Add(1)
		}
		open = b.c.newAppendSegment(meta, segID, order)
		b.created = append(b.created, open)
		ref = segRef{s: open, st: &segStats{}}
	}
	st := *ref.st
	for _, rec := range rows {
		st.add(meta, rec)
		rec.Retain()
		b.appends = append(b.appends, pendingAppend{open.app, rec})
	}
	if b.replay {
		b.runAppends()
	}
	ref.n += n
	ref.st = &st
	segs = insertByOrder(segs, ref)
	b.tables[name] = &tableState{meta: meta, segs: segs, open: open}
	if b.loggable(meta) {
		b.log(walAppend)
		b.logUint(meta.id)
		b.logUint(open.id)
		b.logUint(open.order)
		b.logUint(uint64(len(rows)))
		at := len(b.rec)
		b.rec = append(b.rec, 0, 0, 0, 0)
		for _, rec := range rows {
			b.rec = appendBatch(b.rec, rec)
		}
		binary.LittleEndian.PutUint32(b.rec[at:], uint32(len(b.rec)-at-4))
	}
}

// pendingAppend is rows a commit adds to an append segment once nothing
// can fail any more (a failed commit must leave the segment untouched:
// positions are row counts).
type pendingAppend struct {
	app *appendBuf
	rec arrow.RecordBatch
}

func (b *builder) runAppends() {
	for _, p := range b.appends {
		p.app.add(p.rec)
		b.c.memRows.Add(p.rec.NumRows())
		p.rec.Release()
	}
	b.appends = nil
}

func (b *builder) dropAppends() {
	for _, p := range b.appends {
		p.rec.Release()
	}
	b.appends = nil
}

// insertByOrder places ref among segs by segment order.
func insertByOrder(segs []segRef, ref segRef) []segRef {
	k := len(segs)
	for k > 0 && segs[k-1].s.order > ref.s.order {
		k--
	}
	return slices.Insert(segs, k, ref)
}

// add folds rows into an append segment's statistics.
func (st *segStats) add(meta *tableMeta, rec arrow.RecordBatch) {
	n := int(rec.NumRows())
	st.rows += int64(n)
	for _, col := range rec.Columns() {
		d := col.Data()
		if total := d.Offset() + d.Len(); total > 0 {
			st.bytes += dataBytes(d) * int64(n) / int64(total)
		}
	}
	if !meta.ordered() {
		return
	}
	k := rec.Column(meta.keys[0])
	st.keyNulls += int64(k.NullN())
	for i := 0; i < n; i++ {
		v, ok := valueAt(k, i)
		if !ok {
			continue
		}
		if st.min == nil || compareValues(v, st.min) < 0 {
			st.min = v
		}
		if st.max == nil || compareValues(v, st.max) > 0 {
			st.max = v
		}
	}
}

// attach adds a large statement's segments; the open append segment is
// closed to further appends, which must come after them in insertion order.
func (b *builder) attach(name string, ts *tableState, segs []*segment) {
	next := slices.Clone(ts.segs)
	for _, s := range segs {
		next = insertByOrder(next, refOf(s))
	}
	b.tables[name] = &tableState{meta: ts.meta, segs: next}
}

// deleteRows adds deletion masks to segments; a segment left without rows
// is dropped. strict (commit) fails with 40001 when a segment is gone or a
// row was already deleted by a concurrent commit; replay skips those.
func (b *builder) deleteRows(name string, ts *tableState, dels map[*segment]*delMask, strict bool) error {
	segs := slices.Clone(ts.segs)
	open := ts.open
	for s, m := range dels {
		k := slices.IndexFunc(segs, func(r segRef) bool { return r.s == s })
		if k < 0 {
			if strict {
				return errConcurrentUpdate(ts.meta.def.Name)
			}
			continue
		}
		ref := segs[k]
		u, overlap := ref.del.union(m)
		if overlap && strict {
			return errConcurrentUpdate(ts.meta.def.Name)
		}
		ref.del = u
		if ref.live() == 0 {
			segs = slices.Delete(segs, k, k+1)
			if open == s {
				open = nil
			}
			continue
		}
		segs[k] = ref
	}
	b.tables[name] = &tableState{meta: ts.meta, segs: segs, open: open}
	return nil
}

func errConcurrentUpdate(name string) error {
	return sqlerr.New(codeSerializationFailure, "could not serialize access due to concurrent update").
		WithDetail("Rows of relation %q were deleted or updated by a transaction that committed first.", name)
}

func (b *builder) logDeletes(dels map[*segment]*delMask) {
	b.logUint(uint64(len(dels)))
	for s, m := range dels {
		b.logUint(s.id)
		b.logUint(uint64(len(m.r)))
		for _, r := range m.r {
			b.logUint(uint64(r.lo))
			b.logUint(uint64(r.hi - r.lo))
		}
	}
}

// setMeta replaces a table's definition (ALTER TABLE); a rename moves it.
func (b *builder) setMeta(name string, ts *tableState, next *tableMeta) error {
	if next.def.Name != name {
		if b.tables[next.def.Name] != nil || b.views[next.def.Name] != nil {
			return errDupTable(next.def.Name)
		}
		delete(b.tables, name)
	}
	nts := &tableState{meta: next, segs: ts.segs, open: ts.open}
	if !slices.Equal(ts.meta.colIDs, next.colIDs) {
		nts.open = nil // append segments hold one column layout
	}
	b.tables[next.def.Name] = nts
	return nil
}

// replay applies one log record during recovery.
func (b *builder) replayRecord(payload []byte) error {
	r := &byteReader{b: payload}
	for len(r.b) > 0 && r.err == nil {
		kind := r.u8()
		switch kind {
		case walCreate, walMeta:
			var mt mTable
			if err := json.Unmarshal(r.bytes(), &mt); err != nil {
				return err
			}
			meta, err := tableFromManifest(&mt)
			if err != nil {
				return err
			}
			b.bumpTable(meta.id)
			name, ts := b.byID(meta.id)
			if kind == walCreate {
				if ts == nil {
					b.tables[meta.def.Name] = &tableState{meta: meta}
				}
				continue
			}
			if ts != nil {
				if err := b.setMeta(name, ts, meta); err != nil {
					return err
				}
			}
		case walDrop:
			if name, ts := b.byID(r.uvarint()); ts != nil {
				delete(b.tables, name)
			}
		case walAppend:
			id, segID, order, nb := r.uvarint(), r.uvarint(), r.uvarint(), int(r.uvarint())
			b.bumpSeg(segID, order)
			name, ts := b.byID(id)
			body := &byteReader{b: r.take(int(r.u32()))}
			if ts == nil {
				continue // a table the checkpoint already saw dropped
			}
			var rows []arrow.RecordBatch
			var n int64
			for range nb {
				if body.err != nil {
					break
				}
				rec, err := readBatch(body, b.c.mem, ts.meta.schema)
				if err != nil {
					releaseAll(rows)
					return err
				}
				rows = append(rows, rec)
				n += rec.NumRows()
			}
			if body.err == nil && r.err == nil {
				b.appendRows(name, ts, rows, n, segID, order)
			}
			releaseAll(rows)
			if body.err != nil {
				return body.err
			}
		case walAttach:
			id := r.uvarint()
			var ms []mSegment
			if err := json.Unmarshal(r.bytes(), &ms); err != nil {
				return err
			}
			name, ts := b.byID(id)
			for _, m := range ms {
				b.bumpSeg(m.ID, m.Order)
			}
			if ts == nil {
				continue
			}
			var add []*segment
			for _, m := range ms {
				if slices.ContainsFunc(ts.segs, func(r segRef) bool { return r.s.id == m.ID }) {
					continue
				}
				s, del, err := b.c.segmentFromManifest(ts.meta, &m)
				if err != nil {
					return err
				}
				if del != nil {
					return sqlerr.New(sqlerr.DataCorrupted, "log: attached segment %d has a deletion mask", m.ID)
				}
				add = append(add, s)
				b.created = append(b.created, s)
			}
			b.attach(name, ts, add)
		case walDelete:
			id := r.uvarint()
			name, ts := b.byID(id)
			dels := map[*segment]*delMask{}
			for range int(r.uvarint()) {
				segID := r.uvarint()
				rs := make([]posRange, 0, 4)
				for range int(r.uvarint()) {
					lo := int64(r.uvarint())
					rs = append(rs, posRange{lo, lo + int64(r.uvarint())})
				}
				if ts == nil {
					continue
				}
				if k := slices.IndexFunc(ts.segs, func(r segRef) bool { return r.s.id == segID }); k >= 0 {
					dels[ts.segs[k].s] = maskFromRanges(rs)
				}
			}
			if ts != nil && r.err == nil {
				if err := b.deleteRows(name, ts, dels, false); err != nil {
					return err
				}
			}
		case walTruncate:
			if name, ts := b.byID(r.uvarint()); ts != nil {
				b.tables[name] = &tableState{meta: ts.meta}
			}
		case walReplace:
			id := r.uvarint()
			ids := make([]uint64, r.uvarint())
			for i := range ids {
				ids[i] = r.uvarint()
			}
			var m *mSegment
			if err := json.Unmarshal(r.bytes(), &m); err != nil {
				return err
			}
			if m != nil {
				b.bumpSeg(m.ID, m.Order)
			}
			name, ts := b.byID(id)
			if ts == nil {
				continue
			}
			if err := b.replaySegments(name, ts, ids, m); err != nil {
				return err
			}
		case walView:
			var v ViewDef
			if err := json.Unmarshal(r.bytes(), &v); err != nil {
				return err
			}
			b.views[v.Name] = &v
		case walDropView:
			delete(b.views, string(r.bytes()))
		default:
			return fmt.Errorf("unknown log operation %d", kind)
		}
	}
	return r.err
}

// replaySegments redoes a compaction: ids replaced by m (nil: removed).
func (b *builder) replaySegments(name string, ts *tableState, ids []uint64, m *mSegment) error {
	if m != nil && slices.ContainsFunc(ts.segs, func(r segRef) bool { return r.s.id == m.ID }) {
		return nil
	}
	var keep []segRef
	found := 0
	for _, r := range ts.segs {
		if slices.Contains(ids, r.s.id) {
			found++
			continue
		}
		keep = append(keep, r)
	}
	if found != len(ids) {
		return nil // the inputs are gone: a later state is already there
	}
	if m != nil {
		s, del, err := b.c.segmentFromManifest(ts.meta, m)
		if err != nil {
			return err
		}
		b.created = append(b.created, s)
		keep = insertByOrder(keep, segRef{s: s, n: s.stats.rows, del: del, st: s.stats})
	}
	b.tables[name] = &tableState{meta: ts.meta, segs: keep}
	return nil
}

func (b *builder) bumpTable(id uint64) { bumpTo(&b.c.nextTable, id) }

func (b *builder) bumpSeg(id, order uint64) {
	bumpTo(&b.c.nextSegID, id)
	bumpTo(&b.c.nextOrder, order)
}

func bumpTo(v interface {
	Load() uint64
	Store(uint64)
}, x uint64) {
	if v.Load() < x {
		v.Store(x)
	}
}

// fileExists reports whether a segment file named by the log is there.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
