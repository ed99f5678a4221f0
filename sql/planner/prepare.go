package planner

import (
	"strconv"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// codeIndeterminateDatatype is Postgres' 42P18.
const codeIndeterminateDatatype = "42P18"

// prepare plans PREPARE: the statement with the declared parameter types,
// every parameter's type known afterwards, as Postgres' PrepareQuery
// requires. A parameter nothing constrains is text when it is a result
// column (SELECT $1, VALUES ($1)), as Postgres resolves an unknown output;
// anywhere else it is 42P18.
func prepare(cat Catalog, n *parser.PrepareStmt, opts *Options) (Plan, error) {
	inner := *opts
	inner.ParamTypes = n.Types
	p, err := Build(cat, n.Stmt, &inner)
	if err != nil {
		return nil, err
	}
	params := p.Shape().Params
	if q, ok := p.(*Query); ok {
		out := map[int]bool{}
		outputParams(q.Root, out)
		if len(out) > 0 {
			types := append([]sqltypes.Type(nil), params...)
			for i := range out {
				types[i-1] = sqltypes.TextType
			}
			inner.ParamTypes = types
			if p, err = Build(cat, n.Stmt, &inner); err != nil {
				return nil, err
			}
			params = p.Shape().Params
		}
	}
	// Declared types beyond the last $n the statement uses are still its
	// parameters: EXECUTE must pass them.
	params = append(append([]sqltypes.Type(nil), params...), n.Types[min(len(params), len(n.Types)):]...)
	for i, t := range params {
		if t.Kind == sqltypes.Unknown {
			return nil, sqlerr.New(codeIndeterminateDatatype, "could not determine data type of parameter $%d", i+1)
		}
	}
	return &Prepare{Name: n.Name, Params: params, Stmt: p}, nil
}

// outputParams records the parameters of unknown type that n outputs as
// they are: result columns whose value is the parameter itself.
func outputParams(n Node, out map[int]bool) {
	add := func(e expr.Expr) {
		if p, ok := e.(*expr.Param); ok && p.T.Kind == sqltypes.Unknown {
			out[p.N] = true
		}
	}
	switch x := n.(type) {
	case *Project:
		for _, e := range x.Exprs {
			add(e)
		}
		outputParams(x.Input, out) // a Project over VALUES or a union passes their columns on
	case *Values:
		for _, r := range x.Rows {
			for _, e := range r {
				add(e)
			}
		}
	case *Sort:
		outputParams(x.Input, out)
	case *Limit:
		outputParams(x.Input, out)
	case *Distinct:
		outputParams(x.Input, out)
	case *DistinctOn:
		outputParams(x.Input, out)
	case *UnionAll:
		for _, in := range x.Inputs {
			outputParams(in, out)
		}
	case *SetOp:
		outputParams(x.Left, out)
		outputParams(x.Right, out)
	}
}

// execute plans EXECUTE: the arguments are bound over no input row and
// converted to the prepared statement's parameter types as Postgres'
// EvaluateParams does (assignment casts; 42804 naming the parameter when
// there is none).
func (b *binder) execute(n *parser.ExecuteStmt) (Plan, error) {
	if b.opts.Prepared == nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "EXECUTE is not supported here")
	}
	target, ok := b.opts.Prepared(n.Name)
	if !ok {
		return nil, ErrNoPrepared(n.Name)
	}
	var args []ast.ExprNode
	if n.Args != nil {
		for _, f := range n.Args.AST.(*ast.SelectStmt).Fields.Fields {
			args = append(args, f.Expr)
		}
	}
	want := target.Shape.Params
	ab := &binder{cat: b.cat, st: n.Args, opts: b.opts}
	ab.params = append(ab.params, b.opts.ParamTypes...)
	plan := &Execute{Name: n.Name, Target: *target}
	if len(want) == 0 {
		// Postgres looks at the arguments only when the statement has
		// parameters: EXECUTE p(anything) runs a p without any.
		if n.Args != nil {
			plan.Params = ab.finishParams()
		}
		return plan, nil
	}
	if len(args) != len(want) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "wrong number of parameters for prepared statement \"%s\"", n.Name).
			WithDetail("Expected %d parameters but got %d.", len(want), len(args))
	}
	row := &Values{Rows: [][]expr.Expr{nil}}
	for i, a := range args {
		if sub := firstSubquery(a); sub != nil {
			pos := ab.pos(sub)
			if pos == 0 {
				pos = ab.pos(a)
			}
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cannot use subquery in EXECUTE parameter").WithPosition(pos)
		}
		e, err := ab.bindExpr(a, &exprCtx{sc: &scope{}, clause: "EXECUTE parameters"})
		if err != nil {
			return nil, err
		}
		t := want[i]
		if t.Kind == sqltypes.Unknown && e.Type().Kind == sqltypes.Unknown {
			t = sqltypes.TextType // an unknown value for an unknown parameter is text, as Postgres reads it
		}
		if t.Kind != sqltypes.Unknown && e.Type() != t {
			if et := e.Type(); et.Kind != sqltypes.Unknown && !assignmentCast(et, t) {
				return nil, errDatatype(ab.pos(a), "parameter $%d of type %s cannot be coerced to the expected type %s", i+1, et, t).
					WithHint("You will need to rewrite or cast the expression.")
			}
			if e, err = ab.assign(e, t, a, "parameter $"+strconv.Itoa(i+1)); err != nil {
				return nil, err
			}
		}
		row.Rows[0] = append(row.Rows[0], e)
		row.Cols = append(row.Cols, Column{Name: "$" + strconv.Itoa(i+1), Type: e.Type(), Nullable: true})
	}
	plan.Args, plan.Params = row, ab.finishParams()
	return plan, nil
}

// ErrNoPrepared is the error for EXECUTE or DEALLOCATE of a name no
// statement is prepared under.
func ErrNoPrepared(name string) error {
	return sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", name)
}

// firstSubquery finds a subquery in an EXECUTE argument, which Postgres
// refuses before looking inside it.
func firstSubquery(n ast.ExprNode) ast.ExprNode {
	var found ast.ExprNode
	n.Accept(subqueryFinder{&found})
	return found
}

type subqueryFinder struct{ found *ast.ExprNode }

func (v subqueryFinder) Enter(n ast.Node) (ast.Node, bool) {
	if s, ok := n.(*ast.SubqueryExpr); ok && *v.found == nil {
		*v.found = s
	}
	return n, *v.found != nil
}

func (v subqueryFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
