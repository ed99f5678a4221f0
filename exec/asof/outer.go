package asof

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
)

// RIGHT and FULL joins: the right rows that are the winner of no left row.
//
// The kernel runs as INNER (RIGHT) or LEFT (FULL) on a right input wrapped
// in a tee (numbering): every batch the kernel reads gets a hidden column,
// the row's ordinal in the right input, which the kernel carries as its
// last payload column, so each output row names its winner. The tee keeps
// the batches it handed out (unmatched below), one entry per row, until
// each row is decided: it won (it came out as some left row's winner), or
// no later left row can select it. With T the last left t read (left t
// ascends, so every later left row has t >= T), a right row can no longer
// be selected when
//
//   - its t or a key is NULL (it is eligible for nobody);
//   - its t lies below the window of T (t < T + lo): below every later
//     window too;
//   - a later row of its key has t' with t <= t' <= min(T, T + hi): that
//     row is eligible for every later left row the first one is eligible
//     for, at least as close, and the later of equal t at or before the
//     left row wins.
//
// Right t ascends, so both edges sweep a prefix of the rows in input
// order. Decided rows leave in input order, the unmatched ones as output
// rows with every left column NULL, so the unmatched rows keep the right
// input's order (spec §2.6). Memory: the rows from the oldest undecided
// one to the kernel's read cursor. A key's latest row with an unbounded
// lower side stays undecided until a later row of its key passes it, or
// the left input ends; the rows behind it wait with it.
//
// At the end of the left input the rest of the right input is read
// through (every row still unread is unmatched).
type unmatched struct {
	mem     memory.Allocator
	sp      *spec
	in      *numbering
	decided decideFunc
	keyEnc  *keyEncoding
	kb      keyBatch
	// rows[i] is the right row of ordinal base+i, in input order.
	rows []outerRow
	head int // rows[:head] have left
	base int64
	// batches the rows point into, oldest first, with the ordinal of
	// their first row.
	batches  []arrow.RecordBatch
	firsts   []int64
	survivor map[string]int64 // per key, the row that passed the edge last
	supPos   int64            // ordinals below it passed the superseding edge
	lowPos   int64            // ordinals below it passed the window's edge
	dropped  int              // batches released from the front
	ready    []arrow.RecordBatch
	leftDone bool
	eof      bool
	payload  []int // the user's payload columns (without the ordinal)
	// acct, when set, is charged rowCost for every row in rows.
	acct    accountant
	charged int64
	what    string // names the join in 53200's detail
}

type outerRow struct {
	batch int32 // index into batches, counted from the first ever
	row   int32
	key   string
	null  bool // t or a key is NULL
	won   bool
	dead  bool
}

// decideFunc marks what the left t T (the last one read) decides: dead
// rows, by the window's lower edge and by superseding (see above).
type decideFunc func(u *unmatched, T arrow.Array, i int) error

// numbering is the tee: it passes the right input's batches on with the
// ordinal column appended, and hands each one to its unmatched tracker.
type numbering struct {
	operator.Operator
	schema *arrow.Schema
	mem    memory.Allocator
	next   int64
	track  *unmatched
	// cond, when set, is the right-only condition: its result is appended
	// after the ordinal (schema withCond), where the kernel and the
	// tracker read it (spec.condCol).
	cond     Cond
	withCond *arrow.Schema
}

func (n *numbering) Schema() *arrow.Schema {
	if n.withCond != nil {
		return n.withCond
	}
	return n.schema
}

func (n *numbering) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := n.Operator.Next(ctx)
	if err != nil {
		return nil, err
	}
	rows := int(b.NumRows())
	ib := array.NewInt64Builder(n.mem)
	ib.Reserve(rows)
	for i := 0; i < rows; i++ {
		ib.UnsafeAppend(n.next + int64(i))
	}
	ord := ib.NewArray()
	ib.Release()
	cols := append(append([]arrow.Array(nil), b.Columns()...), ord)
	out := array.NewRecordBatch(n.schema, cols, int64(rows))
	ord.Release()
	b.Release()
	if n.cond != nil {
		m, err := n.cond.Eval(ctx, out)
		if err != nil {
			out.Release()
			return nil, err
		}
		cols := append(append([]arrow.Array(nil), out.Columns()...), m)
		with := array.NewRecordBatch(n.withCond, cols, int64(rows))
		m.Release()
		out.Release()
		out = with
	}
	first := n.next
	n.next += int64(rows)
	if err := n.track.add(out, first); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// newUnmatched wraps sp's input in the tee and returns its tracker; sp's
// Payload gains the ordinal column last and its Kind becomes the kernel's.
func newUnmatched(sp *spec, mem memory.Allocator) *unmatched {
	rs := sp.Input.Schema()
	fields := append(append([]arrow.Field(nil), rs.Fields()...), arrow.Field{Name: "#ordinal", Type: arrow.PrimitiveTypes.Int64})
	md := rs.Metadata()
	u := &unmatched{mem: mem, sp: sp, keyEnc: &sp.keyEnc, survivor: map[string]int64{}, payload: sp.Payload}
	u.acct, _ = mem.(accountant)
	u.what = "ASOF " + sp.Kind.String() + " JOIN unmatched right rows"
	u.in = &numbering{Operator: sp.Input, schema: arrow.NewSchema(fields, &md), mem: mem, track: u}
	if sp.Cond != nil {
		u.in.cond = sp.Cond
		u.in.withCond = arrow.NewSchema(append(fields, arrow.Field{Name: "#cond", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), &md)
		sp.condCol = rs.NumFields() + 1
	}
	sp.Input = u.in
	sp.Payload = append(append([]int(nil), sp.Payload...), rs.NumFields())
	switch sp.ord {
	case ordNone:
		u.decided = decideWith[uint64](lineTyped{name: sp.Name}, func(l uint64) ordWindow[uint64] {
			return lineOuterWindow(l, sp.Lo, sp.Hi, sp.onKind.float)
		})
	case ordDecimal:
		u.decided = decideWith[decimalValue](decOps{}, func(l decimalValue) ordWindow[decimalValue] {
			return decOps{}.window(l, sp.Lo, sp.Hi)
		})
	default:
		u.decided = decideWith[string](bytesOps{}, func(l string) ordWindow[string] {
			return bytesOps{}.window(l, sp.Lo, sp.Hi)
		})
	}
	return u
}

// lineTyped is the number line's typedOn for the tracker: it decodes a
// copy (decodeOn), never a view.
type lineTyped struct{ name string }

func (l lineTyped) decode(arr arrow.Array, c *onColumn) error { return decodeOn(arr, c, l.name) }
func (lineTyped) cmp(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
func (lineTyped) own(v uint64) uint64 { return v }

// lineOuterWindow is windowFor in the comparison kernel's terms.
func lineOuterWindow(l uint64, lo, hi Bound, float bool) ordWindow[uint64] {
	w := windowFor(l, lo, hi, float)
	return ordWindow[uint64]{lo: w.lo, b: w.b, loOpen: lo.Unbounded, empty: w.empty}
}

// add records the rows of a batch the kernel is about to read.
func (u *unmatched) add(b arrow.RecordBatch, first int64) error {
	n := int(b.NumRows())
	keyCols := make([]arrow.Array, len(u.sp.Keys))
	for i, c := range u.sp.Keys {
		keyCols[i] = b.Column(c)
	}
	u.keyEnc.encode(keyCols, n, &u.kb)
	if u.sp.condCol > 0 {
		if err := maskWith(b.Column(u.sp.condCol), &u.kb, nil); err != nil {
			return err
		}
	}
	t := b.Column(u.sp.On)
	bi := int32(len(u.batches) + u.droppedBatches())
	b.Retain()
	u.batches = append(u.batches, b)
	u.firsts = append(u.firsts, first)
	var w [8]byte
	for i := 0; i < n; i++ {
		r := outerRow{batch: bi, row: int32(i)}
		switch {
		case u.kb.null[i] || t.IsNull(i) || isNaN(t, i):
			r.null, r.dead = true, true
		case u.keyEnc.u64:
			binary.LittleEndian.PutUint64(w[:], u.kb.u64[i])
			r.key = string(w[:])
		default:
			r.key = string(u.kb.key(i))
		}
		u.rows = append(u.rows, r)
	}
	if u.acct != nil {
		var cost int64
		for i := len(u.rows) - n; i < len(u.rows); i++ {
			cost += rowCost(&u.rows[i])
		}
		if err := u.acct.Grow(u.what, cost); err != nil {
			return err
		}
		u.charged += cost
		// The batch just retained is Arrow memory, counted already.
		if err := u.acct.Check(u.what); err != nil {
			return err
		}
	}
	return nil
}

func isNaN(a arrow.Array, i int) bool {
	switch x := a.(type) {
	case *array.Float64:
		return math.IsNaN(x.Value(i))
	case *array.Float32:
		return math.IsNaN(float64(x.Value(i)))
	}
	return false
}

// droppedBatches counts the batches released from the front.
func (u *unmatched) droppedBatches() int { return u.dropped }

// markWon records the winners named by the ordinal column of an output.
func (u *unmatched) markWon(ords arrow.Array) {
	o := ords.(*array.Int64)
	for i := 0; i < o.Len(); i++ {
		if o.IsValid(i) {
			u.rows[o.Value(i)-u.base].won = true
		}
	}
}

// row returns the entry of ordinal o.
func (u *unmatched) row(o int64) *outerRow { return &u.rows[o-u.base] }

// end is the ordinal after the last row read.
func (u *unmatched) end() int64 { return u.base + int64(len(u.rows)) }

func decideWith[V any](typed typedOn[V], window func(V) ordWindow[V]) decideFunc {
	var lc, rc column[V]
	return func(u *unmatched, T arrow.Array, ti int) error {
		if err := typed.decode(T, &lc); err != nil {
			return err
		}
		w := window(lc.t[ti])
		if w.empty {
			return nil
		}
		u.lowPos, u.supPos = max(u.lowPos, u.base), max(u.supPos, u.base)
		cur := -1
		var curBatch arrow.RecordBatch
		val := func(o int64) V {
			r := u.row(o)
			if int(r.batch) != cur {
				cur = int(r.batch)
				curBatch = u.batches[cur-u.droppedBatches()]
				// Decode errors were seen by the kernel first.
				_ = typed.decode(curBatch.Column(u.sp.On), &rc)
			}
			return rc.t[r.row]
		}
		// Below the window's lower edge: dead.
		for ; !w.loOpen && u.lowPos < u.end(); u.lowPos++ {
			r := u.row(u.lowPos)
			if r.null {
				continue
			}
			if c := typed.cmp(val(u.lowPos), w.lo); c > 0 || c == 0 && !w.loExcl {
				break
			}
			r.dead = true
			if s, ok := u.survivor[r.key]; ok && s == u.lowPos {
				delete(u.survivor, r.key)
			}
		}
		// At or before the backward edge: only the last per key lives.
		for ; u.supPos < u.end(); u.supPos++ {
			r := u.row(u.supPos)
			if r.null {
				continue
			}
			if c := typed.cmp(val(u.supPos), w.b); c > 0 || c == 0 && w.bExcl {
				break
			}
			if r.dead {
				continue
			}
			if s, ok := u.survivor[r.key]; ok {
				u.row(s).dead = true
			}
			u.survivor[r.key] = u.supPos
		}
		return nil
	}
}

// killAll decides every row read so far: the left input has ended.
func (u *unmatched) killAll() {
	for i := range u.rows {
		u.rows[i].dead = true
	}
}

// collect moves the decided rows at the front out, the unmatched ones into
// an output batch of schema out (left columns NULL), and releases the
// batches no row points into any more.
func (u *unmatched) collect(ctx context.Context, out *arrow.Schema, nLeft int) error {
	k := 0
	var refs []operator.Ref
	for k < len(u.rows) && u.rows[k].dead {
		if r := u.rows[k]; !r.won {
			refs = append(refs, operator.Ref{Src: r.batch - int32(u.dropped), Row: r.row})
		}
		k++
	}
	if len(refs) > 0 {
		cols := make([]arrow.Array, 0, out.NumFields())
		release := func() {
			for _, c := range cols {
				c.Release()
			}
		}
		for i := 0; i < nLeft; i++ {
			cols = append(cols, array.MakeArrayOfNull(u.mem, out.Field(i).Type, len(refs)))
		}
		srcs := make([]arrow.Array, len(u.batches))
		for _, p := range u.payload {
			for i, b := range u.batches {
				srcs[i] = b.Column(p)
			}
			c, err := operator.Gather(ctx, u.mem, out.Field(len(cols)).Type, srcs, refs)
			if err != nil {
				release()
				return err
			}
			cols = append(cols, c)
		}
		u.ready = append(u.ready, array.NewRecordBatch(out, cols, int64(len(refs))))
		release()
	}
	if u.acct != nil && k > 0 {
		var cost int64
		for i := 0; i < k; i++ {
			cost += rowCost(&u.rows[i])
		}
		u.acct.Shrink(cost)
		u.charged -= cost
	}
	u.rows = u.rows[k:]
	u.base += int64(k)
	// A batch can go once the next one starts at or before the front.
	for len(u.batches) > 0 {
		next := u.end()
		if len(u.batches) > 1 {
			next = u.firsts[1]
		}
		if next > u.base {
			break
		}
		u.batches[0].Release()
		u.batches, u.firsts = u.batches[1:], u.firsts[1:]
		u.dropped++
	}
	return nil
}

// next returns a batch of unmatched rows, reading the rest of the right
// input once the left input has ended; ok is false when there is none.
func (u *unmatched) next(ctx context.Context, out *arrow.Schema, nLeft int) (arrow.RecordBatch, bool, error) {
	for {
		if len(u.ready) > 0 {
			b := u.ready[0]
			u.ready = u.ready[1:]
			return b, true, nil
		}
		if !u.leftDone || u.eof {
			return nil, false, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		b, err := u.in.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			u.eof = true
		case err != nil:
			return nil, false, err
		default:
			b.Release()
		}
		u.killAll()
		if err := u.collect(ctx, out, nLeft); err != nil {
			return nil, false, err
		}
	}
}

// close releases everything the tracker holds.
func (u *unmatched) close() {
	for _, b := range u.batches {
		b.Release()
	}
	u.batches = nil
	for _, b := range u.ready {
		b.Release()
	}
	u.ready = nil
	u.kb.free()
	if u.acct != nil && u.charged > 0 {
		u.acct.Shrink(u.charged)
		u.charged = 0
	}
}

// accountant is the query's memory account when the allocator is one
// (exec/memacct's Account): the tracker charges its per-row bookkeeping
// there and checks the account as it retains batches, so held unmatched
// rows stay within memory_limit (53200 past it).
type accountant interface {
	Grow(what string, n int64) error
	Shrink(n int64)
	Check(what string) error
}

// rowCost is the Go memory one tracked row takes.
func rowCost(r *outerRow) int64 { return int64(unsafe.Sizeof(*r)) + int64(len(r.key)) }
