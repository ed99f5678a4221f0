package planner

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Series is generate_series(Start, Stop[, Step]) as a FROM item: the
// integers from Start to Stop by Step (1 when nil), or the timestamps
// from Start to Stop by an interval Step (added again and again, as
// Postgres does: month steps clamp at month ends and stay clamped). Its
// arguments are constant for one run (literals, parameters, outer
// references of a subquery); its one column is INTEGER, BIGINT,
// TIMESTAMP or TIMESTAMPTZ.
type Series struct {
	Start, Stop, Step expr.Expr
	Cols              []Column
}

var _ Node = (*Series)(nil)

func (s *Series) Schema() []Column { return s.Cols }
func (s *Series) Children() []Node { return nil }

// Ordering: ascending when the step is known positive when the plan is
// built (omitted, or a positive literal), so a generated grid can be the
// left input of an ASOF JOIN (gap filling) without a sort.
func (s *Series) Ordering() ordering.Props {
	if s.Step == nil || positiveStep(s.Step) {
		return ordering.Props{Lex: ordering.Lex{ordering.Asc(0)}}
	}
	return ordering.Props{}
}

func positiveStep(e expr.Expr) bool {
	l, ok := e.(*expr.Literal)
	if !ok {
		return false
	}
	switch v := l.Value.(type) {
	case int64:
		return v > 0
	case arrow.MonthDayNanoInterval:
		return v.Months >= 0 && v.Days >= 0 && v.Nanoseconds >= 0 && v != (arrow.MonthDayNanoInterval{})
	}
	return false
}

func (s *Series) RequiredOrdering() []ordering.Lex { return nil }
func (s *Series) PreservesOrder() []bool           { return nil }

// seriesCall recognizes the select the parser writes for generate_series
// in FROM: SELECT `#generate_series`(args) AS alias.
func seriesCall(s *ast.SelectStmt) (*ast.FuncCallExpr, string, bool) {
	if s.From != nil || s.Fields == nil || len(s.Fields.Fields) != 1 {
		return nil, "", false
	}
	f := s.Fields.Fields[0]
	call, ok := f.Expr.(*ast.FuncCallExpr)
	if !ok || call.FnName.O != parser.MarkerSeries && call.FnName.O != parser.MarkerUnnest && call.FnName.O != parser.MarkerRegexpMatches {
		return nil, "", false
	}
	return call, f.AsName.O, true
}

// bindSeries binds generate_series(start, stop[, step]) over integers or
// timestamps.
func (b *binder) bindSeries(call *ast.FuncCallExpr, name string) (Node, error) {
	c := &exprCtx{sc: &scope{}, clause: "functions in FROM"}
	args := make([]expr.Expr, len(call.Args))
	t := sqltypes.Int4Type
	temporal := false
	for i, a := range call.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		args[i] = e
		switch k := e.Type().Kind; {
		case k == sqltypes.Int8:
			t = sqltypes.Int8Type
		case k == sqltypes.Interval && i == 2, e.Type().IsTemporal():
			temporal = true
		}
	}
	if len(args) < 2 || len(args) > 3 {
		return nil, b.seriesError(call, args)
	}
	if temporal {
		return b.bindTimeSeries(call, name, args)
	}
	for i, a := range args {
		at := a.Type()
		if !at.IsInteger() && at.Kind != sqltypes.Unknown {
			return nil, b.seriesError(call, args)
		}
		var err error
		if args[i], err = b.coerce(a, t, call.Args[i], "argument"); err != nil {
			return nil, err
		}
	}
	s := &Series{Start: args[0], Stop: args[1], Cols: []Column{{Name: name, Type: t}}}
	if len(args) == 3 {
		s.Step = args[2]
	}
	return s, nil
}

// bindTimeSeries binds generate_series(start, stop, step interval): over
// timestamp when neither bound is a timestamptz or date, else (and for
// two untyped bounds) timestamptz, as Postgres resolves it.
func (b *binder) bindTimeSeries(call *ast.FuncCallExpr, name string, args []expr.Expr) (Node, error) {
	if len(args) != 3 {
		return nil, b.seriesError(call, args)
	}
	t := sqltypes.TimestampTZType
	typed := 0
	for _, a := range args[:2] {
		switch a.Type().Kind {
		case sqltypes.Timestamp:
			typed++
		case sqltypes.Unknown:
		case sqltypes.TimestampTZ, sqltypes.Date:
			typed = -10
		default:
			return nil, b.seriesError(call, args)
		}
	}
	if typed > 0 {
		t = sqltypes.TimestampType
	}
	if k := args[2].Type().Kind; k != sqltypes.Interval && k != sqltypes.Unknown {
		return nil, b.seriesError(call, args)
	}
	var err error
	for i := range args {
		want := t
		if i == 2 {
			want = sqltypes.IntervalType
		}
		if args[i], err = b.coerce(args[i], want, call.Args[i], "argument"); err != nil {
			return nil, err
		}
	}
	return &Series{Start: args[0], Stop: args[1], Step: args[2], Cols: []Column{{Name: name, Type: t}}}, nil
}

func (b *binder) seriesError(call *ast.FuncCallExpr, args []expr.Expr) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function generate_series(%s) does not exist", strings.Join(ts, ", ")).
		WithPosition(b.pos(call)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// Unnest is unnest(Array) as a FROM item: the elements of a typed array,
// or of a text array (Postgres' array text form, see sql/pgcatalog) as
// TEXT, in order. With Matches (string, pattern[, flags], all TEXT) and
// no Array it is regexp_matches in FROM: one text[] row per match (see
// functions.RegexpMatches).
type Unnest struct {
	Array   expr.Expr
	Matches []expr.Expr
	Cols    []Column
}

var _ Node = (*Unnest)(nil)

func (u *Unnest) Schema() []Column                 { return u.Cols }
func (u *Unnest) Children() []Node                 { return nil }
func (u *Unnest) Ordering() ordering.Props         { return ordering.Props{} }
func (u *Unnest) RequiredOrdering() []ordering.Lex { return nil }
func (u *Unnest) PreservesOrder() []bool           { return nil }

func (b *binder) bindUnnest(call *ast.FuncCallExpr, name string) (Node, error) {
	c := &exprCtx{sc: &scope{}, clause: "functions in FROM"}
	if len(call.Args) != 1 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "unnest with %d arguments is not supported", len(call.Args)).WithPosition(b.pos(call))
	}
	arr, err := b.bindExpr(call.Args[0], c)
	if err != nil {
		return nil, err
	}
	if t := arr.Type(); t.IsArray() {
		return &Unnest{Array: arr, Cols: []Column{{Name: name, Type: t.ElemType(), Nullable: true}}}, nil
	}
	if t := arr.Type(); !t.IsString() && t.Kind != sqltypes.Unknown {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function unnest(%s) does not exist", t).WithPosition(b.pos(call)).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	if arr, err = b.toText(arr, call.Args[0]); err != nil {
		return nil, err
	}
	return &Unnest{Array: arr, Cols: []Column{{Name: name, Type: sqltypes.TextType, Nullable: true}}}, nil
}

// bindRegexpMatches binds regexp_matches(string, pattern [, flags]) in
// FROM: its arguments, constant like unnest's, are read as text.
func (b *binder) bindRegexpMatches(call *ast.FuncCallExpr, name string) (Node, error) {
	c := &exprCtx{sc: &scope{}, clause: "functions in FROM"}
	args := make([]expr.Expr, len(call.Args))
	for i, a := range call.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	if len(args) < 2 || len(args) > 3 {
		return nil, b.fromFuncError(call, "regexp_matches", args)
	}
	for i, a := range args {
		if t := a.Type(); !t.IsString() && t.Kind != sqltypes.Unknown {
			return nil, b.fromFuncError(call, "regexp_matches", args)
		}
		var err error
		if args[i], err = b.coerce(a, sqltypes.TextType, call.Args[i], "argument"); err != nil {
			return nil, err
		}
	}
	return &Unnest{Matches: args, Cols: []Column{{Name: name, Type: sqltypes.ArrayOf(sqltypes.TextType), Nullable: true}}}, nil
}

func (b *binder) fromFuncError(call *ast.FuncCallExpr, fn string, args []expr.Expr) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", fn, strings.Join(ts, ", ")).
		WithPosition(b.pos(call)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}
