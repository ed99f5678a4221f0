package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Values is a VALUES list: rows of expressions without column references
// (constants, casts, functions of constants), emitted as one batch.
type Values struct {
	mem    memory.Allocator
	schema *arrow.Schema
	rows   [][]*eval.Evaluator
	// lits holds the columns instead of rows when every cell is a literal
	// of its column's type (built directly, without an evaluator per cell).
	lits  [][]*expr.Literal
	types []sqltypes.Type
	done  bool
}

// literalValues returns the Values of rows when every cell is a literal
// and each column's literals share one type; nil otherwise.
func literalValues(mem memory.Allocator, rows [][]expr.Expr, names []string) *Values {
	ncol := len(names)
	if ncol == 0 {
		return nil
	}
	lits := make([][]*expr.Literal, ncol)
	types := make([]sqltypes.Type, ncol)
	for r, row := range rows {
		if len(row) != ncol {
			return nil
		}
		for c, e := range row {
			l, ok := e.(*expr.Literal)
			if !ok || r > 0 && l.T != types[c] || l.T.Kind == sqltypes.Unknown {
				return nil
			}
			types[c] = l.T
			lits[c] = append(lits[c], l)
		}
	}
	fields := make([]arrow.Field, ncol)
	for i, t := range types {
		fields[i] = t.Field(names[i], true)
	}
	return &Values{mem: mem, schema: arrow.NewSchema(fields, nil), lits: lits, types: types}
}

var _ Operator = (*Values)(nil)

var emptySchema = arrow.NewSchema(nil, nil)

// NewValues returns the rows; names[i] names column i, whose type is that
// of the first row's i-th expression (every row must agree: the planner
// casts, as Postgres' VALUES resolves one type per column).
func NewValues(mem memory.Allocator, rows [][]expr.Expr, names []string, env eval.Env) (*Values, error) {
	if len(rows) == 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "VALUES needs at least one row")
	}
	env.Mem = mem
	ncol := len(names)
	if v := literalValues(mem, rows, names); v != nil {
		return v, nil
	}
	types := make([]sqltypes.Type, ncol)
	v := &Values{mem: mem}
	for r, row := range rows {
		if len(row) != ncol {
			return nil, sqlerr.New(sqlerr.SyntaxError, "VALUES lists must all be the same length").
				WithDetail("Row %d has %d values, expected %d.", r+1, len(row), ncol)
		}
		evs, err := compileAll(row, emptySchema, env)
		if err != nil {
			return nil, err
		}
		for c, ev := range evs {
			if r == 0 {
				types[c] = ev.Type()
			} else if !arrow.TypeEqual(ev.Type().Arrow(), types[c].Arrow()) {
				return nil, sqlerr.New(sqlerr.DatatypeMismatch, "VALUES types %s and %s cannot be matched", types[c], ev.Type()).
					WithDetail("Column %d (%s), row %d.", c+1, names[c], r+1)
			}
		}
		v.rows = append(v.rows, evs)
	}
	fields := make([]arrow.Field, ncol)
	for i, t := range types {
		fields[i] = t.Field(names[i], true)
	}
	v.schema = arrow.NewSchema(fields, nil)
	return v, nil
}

func (v *Values) Schema() *arrow.Schema      { return v.schema }
func (v *Values) Open(context.Context) error { return nil }
func (v *Values) Close() error               { return nil }

func (v *Values) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if v.done {
		return nil, io.EOF
	}
	v.done = true
	if v.lits != nil {
		cols := make([]arrow.Array, len(v.lits))
		for c, lits := range v.lits {
			a, err := eval.LiteralColumn(v.mem, v.types[c], lits)
			if err != nil {
				releaseArrays(cols)
				return nil, err
			}
			cols[c] = a
		}
		out := array.NewRecordBatch(v.schema, cols, int64(len(v.lits[0])))
		releaseArrays(cols)
		return out, nil
	}
	one := array.NewRecordBatch(emptySchema, nil, 1)
	defer one.Release()
	ncol := v.schema.NumFields()
	cells := make([][]arrow.Array, ncol)
	defer func() {
		for _, cs := range cells {
			releaseArrays(cs)
		}
	}()
	for _, row := range v.rows {
		for c, ev := range row {
			a, err := ev.Eval(ctx, one)
			if err != nil {
				return nil, err
			}
			cells[c] = append(cells[c], a)
		}
	}
	cols := make([]arrow.Array, ncol)
	for c := range cols {
		a, err := array.Concatenate(cells[c], v.mem)
		if err != nil {
			releaseArrays(cols)
			return nil, err
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(v.schema, cols, int64(len(v.rows)))
	releaseArrays(cols)
	return out, nil
}
