package catalog

import (
	"maps"
	"slices"

	"github.com/asofsql/asofsql/sqlerr"
)

// privateOrder is the first segment order of a view's private segments:
// above every committed segment's, so scans put the transaction's own
// rows after the committed ones (an ordered table's merge breaks ties
// between equal keys by segment order).
const privateOrder = uint64(1) << 62

// privOrder is the order of the k-th private segment of operation i: in
// operation order.
func privOrder(i, k int) uint64 { return privateOrder + uint64(i)<<20 + uint64(k) }

// View is base (a snapshot of the same catalog) with the transaction's own
// changes on top, which its later statements read (PostgreSQL shows a
// transaction its own writes): tables and views it created, altered or
// dropped, the rows it truncated or deleted, and the rows it added. Rows
// of small statements become a private in-memory append segment of the
// view only (never logged, published or added to a shared append
// segment); large statements' segment files are read where they are. The
// view is released on its own; base stays the caller's.
func (tx *Tx) View(base *Snapshot) (*Snapshot, error) {
	if len(tx.ops) == 0 {
		return base.Clone()
	}
	st, _, err := tx.viewState(base)
	if err != nil {
		return nil, err
	}
	return &Snapshot{c: tx.c, st: st}, nil
}

// pendingSeg is a private append segment holding the rows of a run of a
// table's opAppend operations (ops, indexes in tx.ops), in order: its
// positions are their rows concatenated. Views share it, each seeing the
// prefix of the ops it includes (ns[k], sts[k]: rows and stats after ops
// [0, k]).
type pendingSeg struct {
	seg *segment
	ops []int
	n   int64
	st  *segStats
	ns  []int64
	sts []*segStats
}

// dropPrivate releases the transaction's private segments (views keep
// their own references); called when the operations they copy change.
func (tx *Tx) dropPrivate() {
	tx.built = nil
	for _, p := range tx.priv {
		p.seg.release()
	}
	tx.priv = nil
}

// viewBuild is what building a view's state keeps between statements:
// the tables after tx.ops[:nops] were applied to base. The next view over
// the same base, with operations only added since (dropPrivate forgets
// the build whenever operations change in place), applies just the new
// ones, so a block of many statements does not pay for all earlier ones
// in every statement. Its maps are those of a published view state:
// never changed in place, cloned before use.
type viewBuild struct {
	base    *state
	nops    int
	tables  map[string]*tableState
	names   map[uint64]string
	private map[*segment]*pendingSeg
	open    map[uint64]*pendingSeg
	runs    map[*pendingSeg]int
}

// viewState builds the view's state; private tells which segments are
// private and whose rows they hold.
func (tx *Tx) viewState(base *Snapshot) (*state, map[*segment]*pendingSeg, error) {
	if base == nil || base.released.Load() {
		return nil, nil, sqlerr.New(sqlerr.InvalidParameterValue, "snapshot already released")
	}
	if base.c != tx.c {
		return nil, nil, sqlerr.New(sqlerr.InternalError, "transaction view of another catalog's snapshot")
	}
	views := maps.Clone(base.st.views)
	if views == nil {
		views = map[string]*ViewDef{}
	}
	for name, v := range tx.vdefs {
		if v == nil {
			delete(views, name)
		} else {
			views[name] = v
		}
	}
	var tables map[string]*tableState
	var names map[uint64]string // table id: its name now
	var private map[*segment]*pendingSeg
	var open map[uint64]*pendingSeg // table id: the run its rows go to
	var runs map[*pendingSeg]int    // ops of the run this view has seen
	from := 0
	if c := tx.built; c != nil && c.base == base.st && c.nops <= len(tx.ops) {
		tables, names, private = maps.Clone(c.tables), maps.Clone(c.names), maps.Clone(c.private)
		open, runs, from = maps.Clone(c.open), maps.Clone(c.runs), c.nops
	} else {
		tables = maps.Clone(base.st.tables)
		if tables == nil {
			tables = map[string]*tableState{}
		}
		names = make(map[uint64]string, len(tables))
		for name, ts := range tables {
			names[ts.meta.id] = name
		}
		private, open, runs = map[*segment]*pendingSeg{}, map[uint64]*pendingSeg{}, map[*pendingSeg]int{}
	}
	// owned are the table states this view made, changed in place; the
	// base's (and an earlier view's) are copied before their first change.
	owned := map[*tableState]bool{}
	own := func(name string, ts *tableState) *tableState {
		if owned[ts] {
			return ts
		}
		n := &tableState{meta: ts.meta, segs: slices.Clone(ts.segs)}
		owned[n] = true
		tables[name] = n
		return n
	}
	for i := from; i < len(tx.ops); i++ {
		op := &tx.ops[i]
		if op.meta == nil {
			continue
		}
		id := op.meta.id
		name, ok := names[id]
		ts := tables[name]
		if op.kind != opCreate && (!ok || ts == nil || ts.meta.id != id) {
			continue // not in the base (a concurrent DROP): Commit fails
		}
		switch op.kind {
		case opCreate:
			n := &tableState{meta: op.meta}
			owned[n] = true
			tables[op.meta.def.Name] = n
			names[id] = op.meta.def.Name
		case opDrop:
			delete(tables, name)
			delete(names, id)
		case opTruncate:
			n := &tableState{meta: ts.meta}
			owned[n] = true
			tables[name] = n
			delete(open, id)
		case opAlter:
			ts = own(name, ts)
			delete(tables, name)
			ts.meta = op.next
			tables[op.next.def.Name] = ts
			names[id] = op.next.def.Name
			if !slices.Equal(op.meta.colIDs, op.next.colIDs) {
				delete(open, id) // append segments hold one column layout
			}
		case opDelete:
			ts = own(name, ts)
			for k, r := range ts.segs {
				if m := op.dels[r.s]; m != nil {
					ts.segs[k].del, _ = r.del.union(m)
				}
			}
		case opAttach:
			ts = own(name, ts)
			for k, s := range op.segs {
				// Provisional, seen by this transaction only: Commit
				// assigns the real one.
				s.order = privOrder(i, k)
				ts.segs = append(ts.segs, refOf(s))
			}
			delete(open, id) // later rows follow these in order
		case opAppend:
			ts = own(name, ts)
			p := open[id]
			k := len(ts.segs) - 1
			if p == nil || k < 0 || ts.segs[k].s != p.seg {
				// A new run of the table's rows: the transaction keeps
				// its segment for later views, which add only newer rows.
				if p = tx.priv[i]; p == nil {
					p = &pendingSeg{seg: tx.c.newAppendSegment(ts.meta, tx.c.nextSegID.Add(1), privOrder(i, 0)), st: &segStats{}}
					if tx.priv == nil {
						tx.priv = map[int]*pendingSeg{}
					}
					tx.priv[i] = p
				}
				open[id] = p
				private[p.seg] = p
				ts.segs = append(ts.segs, segRef{s: p.seg, st: &segStats{}})
				k = len(ts.segs) - 1
				runs[p] = 0
			}
			at := runs[p]
			if at == len(p.ops) {
				st := *p.st
				for _, rec := range op.rows {
					st.add(ts.meta, rec)
					p.seg.app.add(rec)
				}
				p.ops = append(p.ops, i)
				p.n += op.nrows
				p.st = &st
				p.ns = append(p.ns, p.n)
				p.sts = append(p.sts, p.st)
			}
			runs[p] = at + 1
			ts.segs[k] = segRef{s: p.seg, n: p.ns[at], st: p.sts[at]}
		}
	}
	tx.built = &viewBuild{base: base.st, nops: len(tx.ops), tables: tables, names: names, private: private, open: open, runs: runs}
	st := newState(tables, views) // holds every segment it lists
	st.lsn = base.st.lsn
	return st, private, nil
}
