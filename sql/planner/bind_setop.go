package planner

import (
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/ordering"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// bindSetOpr binds UNION [ALL] chains (left to right, as written).
func (b *binder) bindSetOpr(list *ast.SetOprSelectList, ob *ast.OrderByClause, lim *ast.Limit, env *cteEnv) (Node, error) {
	var acc Node
	for i, sel := range list.Selects {
		n, err := b.bindQuery(sel, env)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			acc = n
			continue
		}
		var op *ast.SetOprType
		switch x := sel.(type) {
		case *ast.SelectStmt:
			op = x.AfterSetOperator
		case *ast.SetOprSelectList:
			op = x.AfterSetOperator
		}
		if op == nil || (*op != ast.Union && *op != ast.UnionAll) {
			name := "this set operation"
			if op != nil {
				name = op.String()
			}
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported", name).WithHint("UNION and UNION ALL are supported.")
		}
		if acc, err = b.union(acc, n); err != nil {
			return nil, err
		}
		if *op == ast.Union {
			acc = &Distinct{Input: acc}
		}
	}
	if ob != nil {
		cols := acc.Schema()
		var keys ordering.Lex
		for _, it := range ob.Items {
			idx := -1
			switch x := it.Expr.(type) {
			case *ast.PositionExpr:
				idx = x.N - 1
				if x.P != nil || idx < 0 || idx >= len(cols) {
					return nil, sqlerr.New(sqlerr.InvalidColumnReference, "ORDER BY position %d is not in select list", x.N).WithPosition(b.pos(x))
				}
			case *ast.ColumnNameExpr:
				if x.Name.Table.O == "" {
					for i, c := range cols {
						if c.Name == x.Name.Name.O {
							idx = i
							break
						}
					}
				}
			}
			if idx < 0 {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ORDER BY on a UNION result must name an output column").WithPosition(b.pos(it.Expr))
			}
			nf, ok := b.st.NullsFirst[it]
			if !ok {
				nf = it.Desc
			}
			keys = append(keys, ordering.Key{Col: idx, Desc: it.Desc, NullsFirst: nf})
		}
		acc = &Sort{Input: acc, Keys: keys}
	}
	return b.limit(acc, lim)
}

// union appends n to acc (flattening UNION ALL chains), converting both
// to the common column types.
func (b *binder) union(acc, n Node) (Node, error) {
	ac, nc := acc.Schema(), n.Schema()
	if len(ac) != len(nc) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each UNION query must have the same number of columns")
	}
	types := make([]sqltypes.Type, len(ac))
	for i := range ac {
		t, ok := commonType(ac[i].Type, nc[i].Type)
		if !ok {
			return nil, errDatatype(0, "UNION types %s and %s cannot be matched", ac[i].Type, nc[i].Type)
		}
		if t.Kind == sqltypes.Unknown {
			t = sqltypes.TextType
		}
		types[i] = t
	}
	var inputs []Node
	if u, ok := acc.(*UnionAll); ok {
		inputs = u.Inputs
	} else {
		inputs = []Node{acc}
	}
	inputs = append(inputs, n)
	u := &UnionAll{}
	for _, in := range inputs {
		conv, err := b.castTo(in, types)
		if err != nil {
			return nil, err
		}
		u.Inputs = append(u.Inputs, conv)
	}
	for i, c := range ac {
		u.Cols = append(u.Cols, Column{Name: c.Name, Type: types[i], Nullable: c.Nullable || nc[i].Nullable})
	}
	return u, nil
}

// castTo projects n to the given column types when any differs.
func (b *binder) castTo(n Node, types []sqltypes.Type) (Node, error) {
	cols := n.Schema()
	same := true
	for i, c := range cols {
		same = same && c.Type == types[i]
	}
	if same {
		return n, nil
	}
	p := &Project{Input: n}
	for i, c := range cols {
		e, err := b.coerce(&expr.Column{Index: i, Name: c.Name, T: c.Type}, types[i], nil, "UNION column")
		if err != nil {
			return nil, err
		}
		p.Exprs = append(p.Exprs, e)
		c.Type = types[i]
		p.Cols = append(p.Cols, c)
	}
	return p, nil
}
