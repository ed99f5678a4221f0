package asofsql

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/lower"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqltypes"
)

// A driver's prepared single-row INSERT run over and over inside a
// transaction block (BEGIN, many Bind/Execute of one INSERT, COMMIT) is
// the statement path's most repeated work, and nothing of it changes
// from one row to the next but the values. So once such an INSERT has
// run in the block the ordinary way (planned or taken from the plan
// cache, checked, its row appended to the transaction: the reference),
// the session keeps what that run resolved, a rowAppend, and the same
// statement's next executions with decoded values (ExecuteParams) only
// check that none of it changed and append their values to typed column
// builders: no plan lookup, snapshot, memory account, context or
// one-row batch per row. The gathered rows become one append of the
// transaction (catalog.Tx.InsertTo, one statement's worth of rows) as
// soon as anything else happens in the session: any other statement or
// execution (Session.run), the block's view being taken (addView), a
// write (writeTo), COMMIT; ROLLBACK and a failed block drop them. So
// every statement of the block, and COMMIT, sees exactly the rows the
// INSERTs appended, in their order, and nobody else sees them before
// COMMIT, as before.
//
// What a row's append checks is what the reference's path would have
// found, and anything else takes that path (which flushes the gathered
// rows first, so order is kept): the same Stmt with the same kept plan
// (no re-plan since, no DISCARD PLANS); the same open, not failed block,
// still without DDL of its own (the plan cache is open); the session's
// settings and identity unchanged; the table's name still resolving to
// the definition the plan was made for (catalog.Tx.Current: a committed
// ALTER, DROP or re-CREATE ends it); values of the plan's parameter types,
// NULL only where the column allows it; the context not cancelled; fewer
// rows than one append keeps in memory (catalog.Tx.SmallRows).

// Param is an argument decoded already (sqltypes.Param); ExecuteParams
// takes BIGINT, INTEGER, SMALLINT, DOUBLE PRECISION, BOOLEAN, TEXT,
// TIMESTAMP and TIMESTAMPTZ values so.
type Param = sqltypes.Param

// ParamArg is p as an argument of Execute: a lower.Value, which binding
// takes as it is.
func ParamArg(p Param) any {
	v := p.Value()
	g := v // one boxed value for both but for timestamps
	if v != nil && (p.T.Kind == sqltypes.Timestamp || p.T.Kind == sqltypes.TimestampTZ) {
		g = p.GoValue()
	}
	return lower.Value{T: p.T, V: v, Go: g}
}

// ExecuteParams is Execute with arguments decoded already (the wire
// server's Bind values), one per parameter. A prepared single-row INSERT
// in a transaction block appends its row without being planned or run
// again (rowappend.go); everything else runs as Execute would with the
// values as lower.Values.
func (st *Stmt) ExecuteParams(ctx context.Context, params []Param) (*Cursor, error) {
	s := st.s
	if s.app != nil && s.app.take(ctx, s, st, params) {
		return s.app.done, nil
	}
	args := make([]any, len(params))
	for i, p := range params {
		args[i] = ParamArg(p)
	}
	c, err := st.Execute(ctx, args...)
	if err == nil && st.insert && c.affected == 1 {
		s.armAppend(st)
	}
	return c, err
}

// maxAppendRows bounds the rows one rowAppend gathers (and so one
// append's batch).
const maxAppendRows = 1024

// rowAppend is what a direct INSERT's run in a transaction block
// resolved (see above), and the rows of its later executions gathered
// since.
type rowAppend struct {
	st     *Stmt
	plan   *cachedPlan // st's kept plan
	d      *directInsert
	tx     *catalog.Tx
	target catalog.Target
	// settings, vopts, user and database are the session's when armed.
	settings       uint64
	vopts          sqltypes.Options
	user, database string
	notNull        []bool // by table column
	builders       []array.Builder
	n, max         int
	// done is the result of every gathered row: a done cursor, which
	// nothing changes (its references never reach zero), so one serves
	// them all.
	done *Cursor
}

// armAppend keeps what st's successful run (a direct single-row INSERT)
// resolved, when it may be reused for the next rows; otherwise nothing.
func (s *Session) armAppend(st *Stmt) {
	if s.app != nil || s.tx == nil || s.failed || !s.planCacheOpen() || st.first != nil || st.st == nil || st.viaPrepare {
		return
	}
	c := st.cache.Load()
	if c == nil || c.s != s {
		return
	}
	ins, ok := c.plan.(*planner.Insert)
	if !ok || ins.Table.Temp {
		return
	}
	d := st.direct(ins)
	if d == nil {
		return
	}
	// The plan looked up the table and at most the absence of a
	// temporary relation of its name, which only this session could
	// create (by a statement, which flushes).
	var dep *catalog.TableInfo
	for _, r := range c.deps {
		switch {
		case !r.key.temp && r.key.name == ins.Table.Name && r.table != nil && r.view == nil:
			dep = r.table
		case r.key.temp && r.table == nil && r.view == nil:
		default:
			return
		}
	}
	if dep == nil {
		return
	}
	t, err := s.tx.Target(ins.Table.Name)
	if err != nil || !sameTable(dep, t.Info()) {
		return
	}
	schema := t.Schema()
	if schema == nil || schema.NumFields() != d.schema.NumFields() {
		return
	}
	a := &rowAppend{st: st, plan: c, d: d, tx: s.tx, target: t, settings: s.settingsVer, vopts: *s.vopts,
		user: s.user, database: s.database, max: min(s.tx.SmallRows(), maxAppendRows)}
	for i, col := range ins.Table.Columns {
		f := d.schema.Field(i)
		if !arrow.TypeEqual(f.Type, schema.Field(i).Type) || !appendable(col.Type, f.Type) {
			return
		}
		a.notNull = append(a.notNull, col.NotNull)
	}
	if a.max < 1 {
		return
	}
	a.done = doneCursorN("INSERT 0 1", 1)
	a.done.refs.Store(1 << 62)
	s.app = a
}

// appendable reports the column types whose values a Param holds and a
// builder of Arrow type dt takes as a literal of t would be built.
func appendable(t sqltypes.Type, dt arrow.DataType) bool {
	var want arrow.Type
	switch t {
	case sqltypes.Int8Type:
		want = arrow.INT64
	case sqltypes.Int4Type:
		want = arrow.INT32
	case sqltypes.Int2Type:
		want = arrow.INT16
	case sqltypes.Float8Type:
		want = arrow.FLOAT64
	case sqltypes.BoolType:
		want = arrow.BOOL
	case sqltypes.TextType:
		want = arrow.STRING
	case sqltypes.TimestampType, sqltypes.TimestampTZType:
		want = arrow.TIMESTAMP
	default:
		return false
	}
	return dt.ID() == want
}

// take appends st's row of params when everything its reference run
// resolved still holds (see above); false leaves it to the ordinary path.
func (a *rowAppend) take(ctx context.Context, s *Session, st *Stmt, params []Param) bool {
	if a.st != st || s.tx != a.tx || s.failed || s.block != nil || st.first != nil || a.n >= a.max ||
		st.cache.Load() != a.plan || s.settingsVer != a.settings || *s.vopts != a.vopts ||
		s.user != a.user || s.database != a.database || ctx.Err() != nil {
		return false
	}
	types := a.d.plan.Params
	if len(params) != len(types) {
		return false
	}
	for i, n := range a.d.cols {
		p := &params[n]
		if p.T != types[n] {
			return false
		}
		if p.Null {
			if a.notNull[i] {
				return false // the ordinary path reports it
			}
			continue
		}
		switch p.T.Kind {
		case sqltypes.Int4:
			if p.Int < math.MinInt32 || p.Int > math.MaxInt32 {
				return false
			}
		case sqltypes.Int2:
			if p.Int < math.MinInt16 || p.Int > math.MaxInt16 {
				return false
			}
		}
	}
	if !a.tx.Current(a.target) {
		return false
	}
	if a.builders == nil {
		mem := s.db.opts.mem
		a.builders = make([]array.Builder, len(a.d.cols))
		for i := range a.builders {
			a.builders[i] = array.NewBuilder(mem, a.d.schema.Field(i).Type)
		}
	}
	for i, n := range a.d.cols {
		p := &params[n]
		if p.Null {
			a.builders[i].AppendNull()
			continue
		}
		switch b := a.builders[i].(type) {
		case *array.Int64Builder:
			b.Append(p.Int)
		case *array.Int32Builder:
			b.Append(int32(p.Int))
		case *array.Int16Builder:
			b.Append(int16(p.Int))
		case *array.Float64Builder:
			b.Append(p.Float)
		case *array.BooleanBuilder:
			b.Append(p.Bool)
		case *array.StringBuilder:
			b.Append(p.Str)
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(p.Int))
		}
	}
	a.n++
	return true
}

// release drops the gathered rows.
func (a *rowAppend) release() {
	for _, b := range a.builders {
		b.Release()
	}
	a.builders = nil
	a.n = 0
}

// flushAppend ends the session's rowAppend: its gathered rows become one
// append of the block (in the block it was made in, when that is still
// open and not failed; otherwise they go with the block).
func (s *Session) flushAppend() error {
	a := s.app
	if a == nil {
		return nil
	}
	s.app = nil
	defer a.release()
	if a.n == 0 || s.tx != a.tx || s.failed {
		return nil
	}
	arrs := make([]arrow.Array, len(a.builders))
	for i, b := range a.builders {
		arrs[i] = b.NewArray()
	}
	rec := array.NewRecordBatch(a.d.schema, arrs, int64(a.n))
	for _, x := range arrs {
		x.Release()
	}
	rdr := &oneBatch{schema: a.d.schema, rec: rec}
	defer rdr.Release()
	// The rows were acknowledged: their append does not observe the
	// cancellation of whatever statement comes next.
	if _, err := a.tx.InsertTo(context.Background(), a.target, rdr); err != nil {
		return s.fail(err)
	}
	return nil
}
