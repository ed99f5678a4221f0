package eval

import (
	"bytes"
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// SubqueryRunner runs the plan of s with its outer values bound (args[i]
// is the value of OuterRef N=i+1, in the expr.Literal representation of
// s.Args[i]'s type) and returns the values of its first column in the
// same representation, at most max of them (max < 0: all). Package lower
// provides it; eval never sees plans.
type SubqueryRunner func(ctx context.Context, s *expr.Subquery, args []any, max int) ([]any, error)

// codeCardinalityViolation is Postgres' cardinality_violation.
const codeCardinalityViolation = "21000"

// subqueryCacheSize bounds the results a subquery node remembers (one per
// distinct outer value combination); past it the cache starts over.
const subqueryCacheSize = 4096

// subNode evaluates a subquery expression: per row, the plan runs for
// the row's outer values, once per distinct combination (cached).
type subNode struct {
	s     *expr.Subquery
	args  []node
	run   SubqueryRunner
	cache map[string]any
}

func (c *compiler) compileSubquery(s *expr.Subquery) (node, error) {
	if c.env.Subquery == nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "subqueries cannot be evaluated here")
	}
	n := &subNode{s: s, run: c.env.Subquery, cache: map[string]any{}}
	for _, a := range s.Args {
		an, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, an)
	}
	return n, nil
}

func (n *subNode) typ() sqltypes.Type { return n.s.T }

func (n *subNode) eval(c *call, b arrow.RecordBatch) (arrow.Array, error) {
	rows := int(b.NumRows())
	if len(n.args) == 0 {
		v, err := n.value(c.ctx, "", nil)
		if err != nil {
			return nil, err
		}
		return vec.Const(c.mem, n.s.T, v, rows), nil
	}
	arrs := make([]arrow.Array, len(n.args))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, a := range n.args {
		arr, err := a.eval(c, b)
		if err != nil {
			return nil, err
		}
		arrs[i] = arr
	}
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	args := make([]any, len(arrs))
	prevArgs := make([]any, len(arrs))
	runStart := 0
	var prev any
	flush := func(end int) {
		if end > runStart {
			parts = append(parts, vec.Const(c.mem, n.s.T, prev, end-runStart))
		}
		runStart = end
	}
	for r := 0; r < rows; r++ {
		for i, a := range arrs {
			args[i] = vec.Value(a, r)
		}
		if r > 0 && sameValues(args, prevArgs) { // the run goes on
			continue
		}
		v, err := n.value(c.ctx, fmt.Sprintf("%#v", args), args)
		if err != nil {
			return nil, err
		}
		flush(r)
		prev = v
		copy(prevArgs, args)
	}
	flush(rows)
	if len(parts) == 1 {
		out := parts[0]
		parts = nil
		return out, nil
	}
	if len(parts) == 0 {
		return vec.Const(c.mem, n.s.T, nil, 0), nil
	}
	return array.Concatenate(parts, c.mem)
}

// sameValues compares outer values as the cache key does.
func sameValues(a, b []any) bool {
	for i := range a {
		x, xok := a[i].([]byte)
		y, yok := b[i].([]byte)
		switch {
		case xok || yok:
			if xok != yok || !bytes.Equal(x, y) || (x == nil) != (y == nil) {
				return false
			}
		case a[i] != b[i]:
			return false
		}
	}
	return true
}

// value is the subquery's value for one combination of outer values.
func (n *subNode) value(ctx context.Context, key string, args []any) (any, error) {
	if v, ok := n.cache[key]; ok {
		return v, nil
	}
	max := -1
	switch n.s.Kind {
	case expr.ScalarSub:
		max = 2
	case expr.ExistsSub:
		max = 1
	}
	vals, err := n.run(ctx, n.s, append([]any(nil), args...), max)
	if err != nil {
		return nil, err
	}
	var v any
	switch n.s.Kind {
	case expr.ScalarSub:
		if len(vals) > 1 {
			return nil, sqlerr.New(codeCardinalityViolation, "more than one row returned by a subquery used as an expression")
		}
		if len(vals) == 1 {
			v = vals[0]
		}
	case expr.ExistsSub:
		v = len(vals) > 0
	case expr.AnySub, expr.AllSub:
		// ANY: TRUE if any is TRUE, else NULL if any is NULL, else FALSE.
		// ALL: FALSE if any is FALSE, else NULL if any is NULL, else TRUE.
		decisive := n.s.Kind == expr.AnySub
		v = !decisive
		for _, x := range vals {
			if x == nil {
				v = nil
				continue
			}
			if x.(bool) == decisive {
				v = decisive
				break
			}
		}
	case expr.ArraySub:
		v = append([]any{}, vals...) // {} when there are no rows
	}
	if len(n.cache) >= subqueryCacheSize {
		n.cache = map[string]any{}
	}
	n.cache[key] = v
	return v, nil
}

// ValueAt returns a[i] in the expr.Literal representation of its type
// (nil for NULL): what a SubqueryRunner returns.
func ValueAt(a arrow.Array, i int) any { return vec.Value(a, i) }
