package planner

import (
	"strings"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Series is generate_series(Start, Stop[, Step]) as a FROM item: the
// integers from Start to Stop by Step (1 when nil). Its arguments are
// constant for one run (literals, parameters, outer references of a
// subquery); its one column is INTEGER or BIGINT.
type Series struct {
	Start, Stop, Step expr.Expr
	Cols              []Column
}

var _ Node = (*Series)(nil)

func (s *Series) Schema() []Column                 { return s.Cols }
func (s *Series) Children() []Node                 { return nil }
func (s *Series) Ordering() ordering.Props         { return ordering.Props{} }
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
	if !ok || call.FnName.O != parser.MarkerSeries {
		return nil, "", false
	}
	return call, f.AsName.O, true
}

// bindSeries binds generate_series(start, stop[, step]) over integers.
func (b *binder) bindSeries(call *ast.FuncCallExpr, name string) (Node, error) {
	c := &exprCtx{sc: &scope{}, clause: "functions in FROM"}
	args := make([]expr.Expr, len(call.Args))
	t := sqltypes.Int4Type
	for i, a := range call.Args {
		e, err := b.bindExpr(a, c)
		if err != nil {
			return nil, err
		}
		args[i] = e
		if e.Type().Kind == sqltypes.Int8 {
			t = sqltypes.Int8Type
		}
	}
	if len(args) < 2 || len(args) > 3 {
		return nil, b.seriesError(call, args)
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

func (b *binder) seriesError(call *ast.FuncCallExpr, args []expr.Expr) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function generate_series(%s) does not exist", strings.Join(ts, ", ")).
		WithPosition(b.pos(call)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}
