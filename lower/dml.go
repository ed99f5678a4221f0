package lower

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// The statements that change rows (DELETE, UPDATE) hand the catalog
// functions over a table's batches rather than operators: the catalog
// reads the rows (pruning segments by key range) and calls them. They are
// built here, in the one place plans meet the evaluator, with the same
// parameter binding and subquery runner as queries.

// Rows is what a DELETE or UPDATE passes to the catalog: the key range,
// the predicate (nil: every row in range) and, for UPDATE, the function
// computing new rows. None is set when a bound is NULL: no row matches.
type Rows struct {
	Range *catalog.Range
	Where catalog.Predicate
	Set   func(ctx context.Context, old arrow.RecordBatch) (arrow.RecordBatch, error)
	None  bool
}

// DeleteRows prepares a DELETE of p against snap.
func DeleteRows(ctx context.Context, snap *catalog.Snapshot, p *planner.Delete, env Env) (Rows, error) {
	return rowsOf(ctx, snap, p.Table, p.Range, p.Where, nil, env)
}

// UpdateRows prepares an UPDATE of p against snap.
func UpdateRows(ctx context.Context, snap *catalog.Snapshot, p *planner.Update, env Env) (Rows, error) {
	return rowsOf(ctx, snap, p.Table, p.Range, p.Where, p.Set, env)
}

func rowsOf(ctx context.Context, snap *catalog.Snapshot, t *catalog.TableInfo, bounds []planner.KeyBound, where expr.Expr,
	set []expr.Expr, env Env) (Rows, error) {
	b := newBuilder(ctx, snap, env)
	var out Rows
	if len(bounds) > 0 {
		r, none, err := b.keyRange(t, bounds)
		if err != nil || none {
			return Rows{None: none}, err
		}
		out.Range = r
	}
	if where != nil {
		ev, err := eval.Compile(b.bind(where), t.Schema, b.env.Eval)
		if err != nil {
			return Rows{}, err
		}
		out.Where = func(ctx context.Context, rec arrow.RecordBatch) (arrow.Array, error) {
			if err := sameColumns(t, rec); err != nil {
				return nil, err
			}
			return ev.Eval(ctx, rec)
		}
	}
	if set != nil {
		evs := make([]*eval.Evaluator, len(set))
		for i, e := range set {
			ev, err := eval.Compile(b.bind(e), t.Schema, b.env.Eval)
			if err != nil {
				return Rows{}, err
			}
			evs[i] = ev
		}
		out.Set = func(ctx context.Context, old arrow.RecordBatch) (arrow.RecordBatch, error) {
			if err := sameColumns(t, old); err != nil {
				return nil, err
			}
			cols := make([]arrow.Array, len(evs))
			release := func() {
				for _, c := range cols {
					if c != nil {
						c.Release()
					}
				}
			}
			for i, ev := range evs {
				a, err := ev.Eval(ctx, old)
				if err != nil {
					release()
					return nil, err
				}
				cols[i] = a
			}
			rec := array.NewRecordBatch(t.Schema, cols, old.NumRows())
			release()
			return rec, nil
		}
	}
	return out, nil
}

// sameColumns checks that the catalog hands over rows of the columns the
// statement was planned for: an ALTER TABLE that committed in between
// changes them, and the statement must then fail rather than misread.
func sameColumns(t *catalog.TableInfo, rec arrow.RecordBatch) error {
	ok := int(rec.NumCols()) == t.Schema.NumFields()
	for i := 0; ok && i < int(rec.NumCols()); i++ {
		ok = arrow.TypeEqual(rec.Column(i).DataType(), t.Schema.Field(i).Type)
	}
	if !ok {
		return sqlerr.New("40001", "could not serialize access due to concurrent update").
			WithDetail("The columns of relation \"%s\" changed while the statement ran.", t.Name)
	}
	return nil
}

// keyRange evaluates the bounds into the catalog's range; none when a
// bound is NULL (the comparison is never true).
func (b *builder) keyRange(t *catalog.TableInfo, bounds []planner.KeyBound) (*catalog.Range, bool, error) {
	r := &catalog.Range{}
	kt := t.Columns[t.OrderKeys[0]].Type
	for _, kb := range bounds {
		v, err := b.constant(kb.Value) // subquery.go
		if err != nil {
			return nil, false, err
		}
		if v == nil {
			return nil, true, nil
		}
		switch kb.Op {
		case expr.Eq:
			tighten(r, v, false, true, kt)
			tighten(r, v, false, false, kt)
		case expr.Gt:
			tighten(r, v, true, true, kt)
		case expr.Ge:
			tighten(r, v, false, true, kt)
		case expr.Lt:
			tighten(r, v, true, false, kt)
		case expr.Le:
			tighten(r, v, false, false, kt)
		default:
			return nil, false, sqlerr.New(sqlerr.InternalError, "lower: key bound with operator %s", kb.Op)
		}
	}
	return r, false, nil
}

// tighten narrows one end of r to v (lo: the lower end).
func tighten(r *catalog.Range, v any, exclusive, lo bool, t sqltypes.Type) {
	cur, curEx := r.Hi, r.HiExclusive
	if lo {
		cur, curEx = r.Lo, r.LoExclusive
	}
	if cur != nil {
		c := compareLiterals(v, cur, t)
		if lo && (c < 0 || c == 0 && (curEx || !exclusive)) || !lo && (c > 0 || c == 0 && (curEx || !exclusive)) {
			return
		}
	}
	if lo {
		r.Lo, r.LoExclusive = v, exclusive
	} else {
		r.Hi, r.HiExclusive = v, exclusive
	}
}

// compareLiterals orders two literal values of type t as the catalog
// does (the comparison of the evaluator, NaN above every number).
func compareLiterals(a, b any, t sqltypes.Type) int {
	x, y := literalArray(a, t), literalArray(b, t)
	defer x.Release()
	defer y.Release()
	cmp, err := eval.Comparator(t, x, y)
	if err != nil {
		return 0
	}
	return cmp(0, 0)
}

func literalArray(v any, t sqltypes.Type) arrow.Array {
	a, err := eval.LiteralColumn(memory.DefaultAllocator, t, []*expr.Literal{{Value: v, T: t}})
	if err != nil {
		panic(err) // a value of the type just evaluated always fits it
	}
	return a
}

// Constant evaluates an expression without columns (a DEFAULT, a bound)
// to a literal of its type.
func Constant(ctx context.Context, snap *catalog.Snapshot, e expr.Expr, env Env) (*expr.Literal, error) {
	v, err := newBuilder(ctx, snap, env).constant(e)
	if err != nil {
		return nil, err
	}
	return &expr.Literal{Value: v, T: e.Type()}, nil
}

// DefaultText evaluates a column's DEFAULT expression into the text the
// catalog stores (catalog.Column.Default): the value's output in the
// default settings (UTC, ISO), which reads back exactly whatever the
// session's settings. nil for a NULL default.
func DefaultText(ctx context.Context, snap *catalog.Snapshot, e expr.Expr, t sqltypes.Type, env Env) (*string, error) {
	lit, err := Constant(ctx, snap, e, env)
	if err != nil || lit.Value == nil {
		return nil, err
	}
	a := literalArray(lit.Value, t)
	defer a.Release()
	s := string(sqltypes.EncodeText(nil, a, 0, t, sqltypes.DefaultOptions()))
	return &s, nil
}
