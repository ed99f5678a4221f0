package asofsql

import (
	"context"
	"errors"
	"io"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

// SQL cursors (DECLARE, FETCH, MOVE, CLOSE) work as Postgres' portals do.
// DECLARE plans and opens the query once, on the statement's snapshot,
// and FETCH pulls its rows from the running plan: nothing is read ahead
// and nothing is materialized, except
//   - a SCROLL cursor keeps the rows read so far, to go back over them
//     (and Postgres' default, a cursor that may scroll when its plan can
//     run backward, is NO SCROLL here, since asofsql's plans run forward
//     only: a backward FETCH is 55000 with Postgres' hint);
//   - a WITH HOLD cursor reads its remaining rows into memory when the
//     transaction that declared it commits (at once outside a block), as
//     Postgres does, and releases its snapshot.
//
// What is kept counts against memory_limit (53200 beyond it). A cursor
// without HOLD lives until its transaction block ends; a WITH HOLD one
// until CLOSE, DISCARD ALL, the end of the session, or the rollback of the
// block that declared it.
//
// Positions follow Postgres' portal code (DoPortalRunFetch and
// PortalRunSelect in pquery.c), so FETCH/MOVE counts, positions and
// errors match it: atStart/atEnd/pos are the portal's, and e is where the
// "executor" stands: 0 before the first row, k on row k, read+1 past the
// last once the plan has ended.
type declared struct {
	name   string
	cols   []planner.Column
	schema *arrow.Schema
	scroll bool
	hold   bool
	binary bool
	// inBlock: declared in the open transaction block (a ROLLBACK drops
	// it even WITH HOLD; its COMMIT materializes it).
	inBlock bool
	failed  bool

	op      exec.Operator // nil once ended, materialized or closed
	ctx     context.Context
	cancel  context.CancelCauseFunc
	release func() // the snapshot's hold
	mem     memory.Allocator

	// keep: rows read are kept in buf (SCROLL, or materialized WITH
	// HOLD); buf holds rows base+1..read, starts[i] the 0-based row index
	// of buf[i]'s first row.
	keep   bool
	buf    []arrow.RecordBatch
	starts []int64
	base   int64
	bytes  int64
	limit  int64
	// pending holds rows e+1..read of a cursor that keeps nothing.
	pending arrow.RecordBatch

	read  int64 // rows taken from op
	ended bool  // op has no more rows: the result has read rows

	e       int64
	atStart bool
	atEnd   bool
	pos     int64
}

// errNoScroll is Postgres' refusal of a backward move on a NO SCROLL
// cursor.
func errNoScroll() error {
	return sqlerr.New("55000", "cursor can only scan forward").
		WithHint("Declare it with SCROLL option to enable backward scan.")
}

// declare runs DECLARE: the query is opened on a clone of snap, under a
// context of its own that lives as long as the cursor.
func (s *Session) declare(parent context.Context, snap *snapshot, p *planner.Declare, args []any) error {
	if !p.Hold && s.tx == nil {
		return sqlerr.New(sqlerr.NoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks")
	}
	if _, ok := s.cursors[p.Name]; ok {
		return sqlerr.New(codeDuplicateCursor, "cursor \"%s\" already exists", p.Name)
	}
	held, err := snap.Clone()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	op, err := s.lowerQuery(ctx, held, p.Query.Params, p.Query.Root, args, nil)
	if err == nil {
		stop := context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
		err = op.Open(ctx)
		stop()
		if err != nil {
			op.Close()
		}
	}
	if err != nil {
		cancel(nil)
		held.Release()
		return err
	}
	c := &declared{name: p.Name, cols: p.Query.Root.Schema(), schema: op.Schema(), scroll: p.Scroll, hold: p.Hold,
		binary: p.Binary, inBlock: s.tx != nil, op: op, ctx: ctx, cancel: cancel, release: held.Release,
		mem: s.db.opts.mem, keep: p.Scroll, limit: s.memLimit, atStart: true}
	if s.cursors == nil {
		s.cursors = map[string]*declared{}
	}
	if s.tx == nil {
		// WITH HOLD outside a block: its own transaction commits now.
		if err := c.materialize(parent); err != nil {
			c.close()
			return err
		}
	}
	s.cursors[p.Name] = c
	return nil
}

const codeDuplicateCursor = "42P03"

// cursor finds a declared cursor; 34000 without one.
func (s *Session) cursor(name string) (*declared, error) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, planner.ErrNoCursor(name)
	}
	if c.failed {
		return nil, sqlerr.New("55000", "portal \"%s\" cannot be run", name)
	}
	return c, nil
}

// cursorShape is what planning FETCH needs of a cursor: its columns.
func (s *Session) cursorShape(name string) ([]planner.Column, bool, bool) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, false, false
	}
	return c.cols, c.binary, true
}

// CursorColumns describes the rows of a cursor DECLARE made (what the
// wire protocol's Describe of a portal of that name answers); binary
// reports a BINARY cursor.
func (s *Session) CursorColumns(name string) (cols []Column, binary, ok bool) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, false, false
	}
	return columnsOf(c.schema), c.binary, true
}

// closeCursor runs CLOSE.
func (s *Session) closeCursor(p *planner.CloseCursor) error {
	if p.All {
		s.closeCursors(func(*declared) bool { return true })
		return nil
	}
	c, ok := s.cursors[p.Name]
	if !ok {
		return planner.ErrNoCursor(p.Name)
	}
	c.close()
	delete(s.cursors, p.Name)
	return nil
}

// closeCursors closes the cursors drop selects.
func (s *Session) closeCursors(drop func(*declared) bool) {
	for name, c := range s.cursors {
		if drop(c) {
			c.close()
			delete(s.cursors, name)
		}
	}
}

// holdCursors is the cursors' part of COMMIT: those without HOLD close,
// those WITH HOLD declared in the block are materialized.
func (s *Session) holdCursors(ctx context.Context) error {
	s.closeCursors(func(c *declared) bool { return !c.hold })
	names := make([]string, 0, len(s.cursors))
	for name := range s.cursors {
		names = append(names, name)
	}
	sort.Strings(names) // a deterministic first error
	for _, name := range names {
		c := s.cursors[name]
		if !c.inBlock {
			continue
		}
		if err := c.materialize(ctx); err != nil {
			return err
		}
		c.inBlock = false
	}
	return nil
}

// endCursors is the cursors' part of the end of a block: a ROLLBACK drops
// every cursor but those WITH HOLD declared before the block.
func (s *Session) endCursors(rollback bool) {
	if rollback {
		s.closeCursors(func(c *declared) bool { return !c.hold || c.inBlock })
	}
	s.closeCursors(func(c *declared) bool { return !c.hold })
}

func (c *declared) close() {
	if c.op != nil {
		c.op.Close()
		c.op = nil
	}
	if c.pending != nil {
		c.pending.Release()
		c.pending = nil
	}
	for _, b := range c.buf {
		b.Release()
	}
	c.buf, c.starts = nil, nil
	if c.cancel != nil {
		c.cancel(nil)
		c.cancel = nil
	}
	if c.release != nil {
		c.release()
		c.release = nil
	}
}

// link makes the cancellation of a statement's ctx cancel the cursor's
// plan while the statement runs (until stop).
func (c *declared) link(ctx context.Context) (stop func() bool) {
	cancel := c.cancel
	return context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
}

// fail marks the cursor unusable after an error in its plan, as Postgres
// marks a failed portal.
func (c *declared) fail(err error) error {
	if err != nil && !errors.Is(err, io.EOF) {
		c.failed = true
	}
	return err
}

// endPlan closes the plan after its last row, releasing its snapshot.
func (c *declared) endPlan() {
	c.ended = true
	if c.op != nil {
		c.op.Close()
		c.op = nil
	}
	if c.release != nil {
		c.release()
		c.release = nil
	}
}

// materialize reads the rest of the plan into memory (WITH HOLD at
// COMMIT). A cursor that keeps nothing keeps from its next row on: it
// cannot go back.
func (c *declared) materialize(ctx context.Context) error {
	if c.ended {
		if !c.keep && c.pending != nil {
			c.keepFrom(c.e)
		}
		return nil
	}
	if !c.keep {
		c.keepFrom(c.e)
	}
	defer c.link(ctx)()
	for {
		b, err := c.pull()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return c.fail(err)
		}
		b.Release()
	}
}

// keepFrom turns a cursor that keeps nothing into one that keeps rows
// from e+1 on (its pending rows first).
func (c *declared) keepFrom(e int64) {
	c.keep, c.base = true, e
	if c.pending != nil {
		p := c.pending
		c.pending = nil
		c.buf, c.starts = append(c.buf, p), append(c.starts, e)
		c.bytes += exec.BatchBytes(p)
	}
}

// pull reads the plan's next non-empty batch (which the caller releases;
// a keeping cursor also keeps it); io.EOF at the end.
func (c *declared) pull() (arrow.RecordBatch, error) {
	if c.ended {
		return nil, io.EOF
	}
	for {
		b, err := c.op.Next(c.ctx)
		if errors.Is(err, io.EOF) {
			c.endPlan()
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if c.keep {
			c.bytes += exec.BatchBytes(b)
			if c.limit > 0 && c.bytes > c.limit {
				b.Release()
				return nil, sqlerr.New(sqlerr.OutOfMemory, "cursor \"%s\" exceeded the memory limit of %d bytes", c.name, c.limit).
					WithHint("Raise memory_limit (SET memory_limit = '1GB'), or fetch from a cursor without SCROLL or WITH HOLD.")
			}
			b.Retain()
			c.buf, c.starts = append(c.buf, b), append(c.starts, c.read)
		}
		c.read += b.NumRows()
		return b, nil
	}
}

// kept returns up to max rows of buf from 0-based row index i on, in one
// batch (a slice of one kept batch).
func (c *declared) kept(i, max int64) arrow.RecordBatch {
	k := sort.Search(len(c.starts), func(k int) bool { return c.starts[k] > i }) - 1
	b := c.buf[k]
	lo := i - c.starts[k]
	hi := min(b.NumRows(), lo+max)
	return b.NewSlice(lo, hi)
}

// forward is the executor's forward step: up to max rows from row e+1
// on, in one batch, advancing e; io.EOF past the last row (e is then
// read+1).
func (c *declared) forward(max int64) (arrow.RecordBatch, error) {
	if c.keep && c.e < c.read {
		b := c.kept(c.e, max)
		c.e += b.NumRows()
		return b, nil
	}
	if !c.keep && c.pending != nil {
		return c.takePending(max), nil
	}
	b, err := c.pull()
	if errors.Is(err, io.EOF) {
		c.e = c.read + 1
		return nil, io.EOF
	}
	if err != nil {
		return nil, err
	}
	if c.keep {
		b.Release()
		out := c.kept(c.e, max)
		c.e += out.NumRows()
		return out, nil
	}
	c.pending = b
	return c.takePending(max), nil
}

func (c *declared) takePending(max int64) arrow.RecordBatch {
	p := c.pending
	n := p.NumRows()
	if n <= max {
		c.pending = nil
		c.e += n
		return p
	}
	out := p.NewSlice(0, max)
	c.pending = p.NewSlice(max, n)
	p.Release()
	c.e += max
	return out
}

// backward is the executor's backward step: up to count rows (0: all)
// before row e, last first, from what the cursor keeps; e moves to the
// last row returned, or to 0 when they run out.
func (c *declared) backward(count int64, out *[]arrow.RecordBatch) (int64, error) {
	want := c.e - 1 - c.base // rows available before e
	if count > 0 && count < want {
		want = count
	}
	var n int64
	for n < want {
		i := c.e - 2 - c.base - n // 0-based buffer row of the next row
		k := sort.Search(len(c.starts), func(k int) bool { return c.starts[k]-c.base > i }) - 1
		lo := max(c.starts[k]-c.base, i-(want-n)+1)
		if out != nil {
			idx := make([]int, 0, i-lo+1)
			for r := i; r >= lo; r-- {
				idx = append(idx, int(r-(c.starts[k]-c.base)))
			}
			b, err := eval.TakeBatch(c.mem, c.buf[k], idx)
			if err != nil {
				return n, err
			}
			*out = append(*out, b)
		}
		n += i - lo + 1
	}
	if count == 0 || n < count {
		c.e = 0
	} else {
		c.e -= n
	}
	return n, nil
}

// run is the executor run of PortalRunSelect: count rows (0: all) in a
// direction, collected in out (nil: discarded).
func (c *declared) run(forward bool, count int64, out *[]arrow.RecordBatch) (int64, error) {
	if !forward {
		return c.backward(count, out)
	}
	var n int64
	for count == 0 || n < count {
		max := int64(1 << 62)
		if count > 0 {
			max = count - n
		}
		b, err := c.forward(max)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
		n += b.NumRows()
		if out != nil {
			*out = append(*out, b)
		} else {
			b.Release()
		}
	}
	return n, nil
}

// runSelect is Postgres' PortalRunSelect for a run whose rows are
// discarded or collected at once; count is rows, planner.FetchAll for
// all.
func (c *declared) runSelect(forward bool, count int64, out *[]arrow.RecordBatch) (int64, error) {
	if !forward && !c.scroll {
		return 0, errNoScroll()
	}
	if (forward && c.atEnd) || (!forward && c.atStart) || count <= 0 {
		return 0, nil
	}
	exCount := count
	if count == planner.FetchAll {
		exCount = 0
	}
	n, err := c.run(forward, exCount, out)
	if err != nil {
		return n, c.fail(err)
	}
	c.settle(forward, exCount, n)
	return n, nil
}

// settle updates the portal's position after a run of n rows.
func (c *declared) settle(forward bool, exCount, n int64) {
	if forward {
		if n > 0 {
			c.atStart = false
		}
		if exCount == 0 || n < exCount {
			c.atEnd = true
		}
		c.pos += n
		return
	}
	if n > 0 && c.atEnd {
		c.atEnd = false
		c.pos++
	}
	if exCount == 0 || n < exCount {
		c.atStart, c.pos = true, 0
	} else {
		c.pos -= n
	}
}

// rewind is Postgres' DoPortalRewind.
func (c *declared) rewind() error {
	if c.atStart && !c.atEnd {
		return nil
	}
	if !c.scroll {
		return errNoScroll()
	}
	c.e, c.atStart, c.atEnd, c.pos = 0, true, false, 0
	return nil
}

// fetch runs FETCH or MOVE (Postgres' DoPortalRunFetch). MOVE returns its
// count; FETCH returns an operator over the rows, which streams a forward
// fetch from the plan as it is read (the rows it returns settle the
// position when it ends).
func (c *declared) fetch(ctx context.Context, p *planner.Fetch) (exec.Operator, int64, error) {
	stop := c.link(ctx)
	defer stop()
	dir, count := p.Direction, p.Count
	switch dir {
	case planner.FetchForward:
		if count < 0 {
			dir, count = planner.FetchBackward, -count
		}
	case planner.FetchBackward:
		if count < 0 {
			dir, count = planner.FetchForward, -count
		}
	case planner.FetchAbsolute:
		switch {
		case count > 0:
			pos := c.pos
			if c.pos == planner.FetchAll || count-1 < c.pos/2 {
				if err := c.rewind(); err != nil {
					return nil, 0, err
				}
				if count > 1 {
					if _, err := c.runSelect(true, count-1, nil); err != nil {
						return nil, 0, err
					}
				}
			} else {
				if c.atEnd {
					pos++
				}
				if count <= pos {
					if _, err := c.runSelect(false, pos-count+1, nil); err != nil {
						return nil, 0, err
					}
				} else if count > pos+1 {
					if _, err := c.runSelect(true, count-pos-1, nil); err != nil {
						return nil, 0, err
					}
				}
			}
			return c.final(ctx, true, 1, p.Move)
		case count < 0:
			if _, err := c.runSelect(true, planner.FetchAll, nil); err != nil {
				return nil, 0, err
			}
			if count < -1 {
				if _, err := c.runSelect(false, -count-1, nil); err != nil {
					return nil, 0, err
				}
			}
			return c.final(ctx, false, 1, p.Move)
		}
		if err := c.rewind(); err != nil {
			return nil, 0, err
		}
		return c.final(ctx, true, 0, p.Move)
	case planner.FetchRelative:
		switch {
		case count > 0:
			if count > 1 {
				if _, err := c.runSelect(true, count-1, nil); err != nil {
					return nil, 0, err
				}
			}
			return c.final(ctx, true, 1, p.Move)
		case count < 0:
			if count < -1 {
				if _, err := c.runSelect(false, -count-1, nil); err != nil {
					return nil, 0, err
				}
			}
			return c.final(ctx, false, 1, p.Move)
		}
		dir = planner.FetchForward
	}
	forward := dir == planner.FetchForward
	if count == 0 {
		// Zero re-fetches the current row, if there is one.
		onRow := !c.atStart && !c.atEnd
		if p.Move {
			if onRow {
				return nil, 1, nil
			}
			return nil, 0, nil
		}
		if onRow {
			if _, err := c.runSelect(false, 1, nil); err != nil {
				return nil, 0, err
			}
			count, forward = 1, true
		}
	}
	if !forward && count == planner.FetchAll && p.Move {
		// MOVE BACKWARD ALL is a rewind.
		n := c.pos
		if n > 0 && !c.atEnd {
			n--
		}
		if err := c.rewind(); err != nil {
			return nil, 0, err
		}
		return nil, n, nil
	}
	return c.final(ctx, forward, count, p.Move)
}

// final is the last PortalRunSelect of a FETCH or MOVE, the one whose
// rows are the result.
func (c *declared) final(ctx context.Context, forward bool, count int64, move bool) (exec.Operator, int64, error) {
	if move || !forward {
		var out []arrow.RecordBatch
		var dst *[]arrow.RecordBatch
		if !move {
			dst = &out
		}
		n, err := c.runSelect(forward, count, dst)
		if err != nil || move {
			releaseAll(out)
			return nil, n, err
		}
		return exec.NewBatches(c.schema, out), n, nil
	}
	f := &fetchOp{c: c, count: count}
	if c.atEnd || count <= 0 {
		f.done = true // no movement
	}
	return f, 0, nil
}

func releaseAll(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// fetchOp streams a forward FETCH: count rows (planner.FetchAll: all)
// from the cursor, pulled from the plan only as the caller reads.
type fetchOp struct {
	c     *declared
	count int64
	n     int64
	done  bool
}

var _ exec.Operator = (*fetchOp)(nil)

func (f *fetchOp) Schema() *arrow.Schema      { return f.c.schema }
func (f *fetchOp) Open(context.Context) error { return nil }

func (f *fetchOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if f.done {
		return nil, io.EOF
	}
	c := f.c
	if c.failed {
		return nil, sqlerr.New("55000", "portal \"%s\" cannot be run", c.name)
	}
	if f.count != planner.FetchAll && f.n >= f.count {
		f.finish()
		return nil, io.EOF
	}
	max := int64(1 << 62)
	if f.count != planner.FetchAll {
		max = f.count - f.n
	}
	stop := c.link(ctx)
	b, err := c.forward(max)
	stop()
	if errors.Is(err, io.EOF) {
		f.finish()
		return nil, io.EOF
	}
	if err != nil {
		f.done = true
		return nil, c.fail(err)
	}
	f.n += b.NumRows()
	return b, nil
}

// finish settles the position once the rows are all returned.
func (f *fetchOp) finish() {
	if f.done {
		return
	}
	f.done = true
	ex := f.count
	if ex == planner.FetchAll {
		ex = 0
	}
	f.c.settle(true, ex, f.n)
}

// Close settles the position by the rows returned when the caller stops
// reading early.
func (f *fetchOp) Close() error {
	if !f.done {
		f.done = true
		if f.n > 0 {
			f.c.atStart = false
		}
		f.c.pos += f.n
	}
	return nil
}
