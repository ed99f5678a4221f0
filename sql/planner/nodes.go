package planner

import (
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sql/ordering"
)

var (
	_ Node = (*Scan)(nil)
	_ Node = (*Filter)(nil)
	_ Node = (*Project)(nil)
	_ Node = (*AsofJoin)(nil)
	_ Node = (*Sort)(nil)
	_ Node = (*Limit)(nil)
	_ Node = (*Aggregate)(nil)
	_ Node = (*Join)(nil)
	_ Node = (*Values)(nil)
	_ Node = (*UnionAll)(nil)
	_ Node = (*Distinct)(nil)
	_ Node = (*SetOp)(nil)
	_ Node = (*DistinctOn)(nil)
)

func (s *Scan) Schema() []Column { return s.cols }
func (s *Scan) Children() []Node { return nil }
func (s *Scan) Ordering() ordering.Props {
	var p ordering.Props
	for _, k := range s.Table.OrderKeys {
		p.Lex = append(p.Lex, ordering.Asc(k))
	}
	return p.Project(s.Columns)
}
func (s *Scan) RequiredOrdering() []ordering.Lex { return nil }
func (s *Scan) PreservesOrder() []bool           { return nil }

func (f *Filter) Schema() []Column { return f.Input.Schema() }
func (f *Filter) Children() []Node { return []Node{f.Input} }

// Ordering is the input's, plus what the condition pins down: col =
// constant makes col constant, col = col makes them equivalent.
func (f *Filter) Ordering() ordering.Props {
	p := f.Input.Ordering()
	for _, c := range expr.Conjuncts(f.Cond) {
		b, ok := c.(*expr.Binary)
		if !ok || b.Op != expr.Eq {
			continue
		}
		lc, lok := b.L.(*expr.Column)
		rc, rok := b.R.(*expr.Column)
		switch {
		case lok && rok:
			p = p.WithEquiv(lc.Index, rc.Index)
		case lok && isConstant(b.R):
			p = p.WithConst(lc.Index)
		case rok && isConstant(b.L):
			p = p.WithConst(rc.Index)
		}
	}
	return p
}
func (f *Filter) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (f *Filter) PreservesOrder() []bool           { return []bool{true} }

// isConstant reports whether e has one value for the whole statement.
func isConstant(e expr.Expr) bool {
	ok := true
	expr.Walk(e, func(x expr.Expr) bool {
		switch n := x.(type) {
		case *expr.Column:
			ok = false
		case *expr.Func:
			if isVolatile(n) {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// isVolatile reports whether f calls a function whose value changes
// between calls (random).
func isVolatile(f *expr.Func) bool {
	d, ok := functions.Of(f)
	return ok && d.Volatile
}

func (p *Project) Schema() []Column { return p.Cols }
func (p *Project) Children() []Node { return []Node{p.Input} }
func (p *Project) Ordering() ordering.Props {
	return p.Input.Ordering().Project(p.sources())
}

// sources maps each output column to the input column it copies (-1:
// computed). Casts are computed: they can reorder (text to int).
func (p *Project) sources() []int {
	src := make([]int, len(p.Exprs))
	for i, e := range p.Exprs {
		src[i] = -1
		if c, ok := e.(*expr.Column); ok {
			src[i] = c.Index
		}
	}
	return src
}
func (p *Project) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (p *Project) PreservesOrder() []bool           { return []bool{true} }

func (j *AsofJoin) Schema() []Column { return j.cols }
func (j *AsofJoin) Children() []Node {
	out := []Node{j.Left}
	for _, r := range j.Rights {
		out = append(out, r.Input)
	}
	return out
}

// Ordering is the left input's: output rows come in left order, and the
// left columns come first.
func (j *AsofJoin) Ordering() ordering.Props {
	if j.outer() {
		// Unmatched right rows interleave with the left rows anyhow.
		return ordering.Props{}
	}
	p := j.Left.Ordering()
	return ordering.Props{Lex: p.Lex, Equiv: p.Equiv, Const: p.Const}
}

// RequiredOrdering: every input ordered by its on column ascending, NULLs
// last (by keys then t where Validate chose that, see
// AsofRight.KeysFirst). For the left input the first right's requirement
// is given; Requirements lists them all.
func (j *AsofJoin) RequiredOrdering() []ordering.Lex {
	out := make([]ordering.Lex, 1+len(j.Rights))
	for _, rq := range j.Requirements() {
		if out[rq.Child] == nil {
			out[rq.Child] = rq.Lex
		}
	}
	return out
}
func (j *AsofJoin) PreservesOrder() []bool {
	out := make([]bool, 1+len(j.Rights))
	out[0] = !j.outer()
	return out
}

// Requirement is one ordering an AsofJoin needs of one child.
type Requirement struct {
	Child int
	// Lex is the required order; Alt is the accepted alternative (keys
	// then t), nil when there are no keys.
	Lex, Alt ordering.Lex
	// Col is the on column's index in that child.
	Col int
	// Right is the right input the requirement comes from.
	Right *AsofRight
}

// Requirements lists what each input must be ordered by: the left input
// by each right's LeftOn, right input i by its On.
func (j *AsofJoin) Requirements() []Requirement {
	var out []Requirement
	for i, r := range j.Rights {
		l := Requirement{Child: 0, Lex: ordering.Lex{ordering.Asc(r.LeftOn)}, Alt: keysThen(r.LeftKeys, r.LeftOn), Col: r.LeftOn, Right: r}
		rr := Requirement{Child: i + 1, Lex: ordering.Lex{ordering.Asc(r.On)}, Alt: keysThen(r.Keys, r.On), Col: r.On, Right: r}
		if r.KeysFirst {
			// Validation chose the (keys..., t) order for this pair.
			l.Lex, l.Alt, rr.Lex, rr.Alt = l.Alt, l.Lex, rr.Alt, rr.Lex
		}
		out = append(out, l, rr)
	}
	return out
}

func keysThen(keys []int, t int) ordering.Lex {
	if len(keys) == 0 {
		return nil
	}
	var l ordering.Lex
	for _, k := range keys {
		l = append(l, ordering.Asc(k))
	}
	return append(l, ordering.Asc(t))
}

func (s *Sort) Schema() []Column { return s.Input.Schema() }
func (s *Sort) Children() []Node { return []Node{s.Input} }
func (s *Sort) Ordering() ordering.Props {
	p := s.Input.Ordering()
	return ordering.Props{Lex: s.Keys, Equiv: p.Equiv, Const: p.Const}
}
func (s *Sort) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (s *Sort) PreservesOrder() []bool           { return []bool{false} }

func (l *Limit) Schema() []Column                 { return l.Input.Schema() }
func (l *Limit) Children() []Node                 { return []Node{l.Input} }
func (l *Limit) Ordering() ordering.Props         { return l.Input.Ordering() }
func (l *Limit) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (l *Limit) PreservesOrder() []bool           { return []bool{true} }

func (a *Aggregate) Schema() []Column                 { return a.cols }
func (a *Aggregate) Children() []Node                 { return []Node{a.Input} }
func (a *Aggregate) Ordering() ordering.Props         { return ordering.Props{} }
func (a *Aggregate) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (a *Aggregate) PreservesOrder() []bool           { return []bool{false} }

func (j *Join) Schema() []Column { return j.cols }
func (j *Join) Children() []Node { return []Node{j.Left, j.Right} }

// Ordering is the left (probe) input's order. An inner equi-join also
// makes each key pair equivalent. RIGHT and FULL joins promise none: the
// right rows that matched nothing come after the others.
func (j *Join) Ordering() ordering.Props {
	if j.Kind.leftNullable() {
		return ordering.Props{}
	}
	p := j.Left.Ordering()
	if j.Kind == JoinInner {
		w := len(j.Left.Schema())
		for i := range j.LeftKeys {
			p = p.WithEquiv(j.LeftKeys[i], w+j.RightKeys[i])
		}
	}
	return p
}
func (j *Join) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil, nil} }
func (j *Join) PreservesOrder() []bool           { return []bool{!j.Kind.leftNullable(), false} }

func (v *Values) Schema() []Column                 { return v.Cols }
func (v *Values) Children() []Node                 { return nil }
func (v *Values) Ordering() ordering.Props         { return ordering.Props{} }
func (v *Values) RequiredOrdering() []ordering.Lex { return nil }
func (v *Values) PreservesOrder() []bool           { return nil }

func (u *UnionAll) Schema() []Column         { return u.Cols }
func (u *UnionAll) Children() []Node         { return u.Inputs }
func (u *UnionAll) Ordering() ordering.Props { return ordering.Props{} }
func (u *UnionAll) RequiredOrdering() []ordering.Lex {
	return make([]ordering.Lex, len(u.Inputs))
}
func (u *UnionAll) PreservesOrder() []bool { return make([]bool, len(u.Inputs)) }

// A SetOp's output follows its left input's order today, but no order is
// promised: a sorted or right-hashing implementation would not keep it.
func (s *SetOp) Schema() []Column                 { return s.Cols }
func (s *SetOp) Children() []Node                 { return []Node{s.Left, s.Right} }
func (s *SetOp) Ordering() ordering.Props         { return ordering.Props{} }
func (s *SetOp) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil, nil} }
func (s *SetOp) PreservesOrder() []bool           { return []bool{false, false} }

func (d *Distinct) Schema() []Column                 { return d.Input.Schema() }
func (d *Distinct) Children() []Node                 { return []Node{d.Input} }
func (d *Distinct) Ordering() ordering.Props         { return ordering.Props{} }
func (d *Distinct) RequiredOrdering() []ordering.Lex { return []ordering.Lex{nil} }
func (d *Distinct) PreservesOrder() []bool           { return []bool{false} }

// Dropping rows keeps the input's order (and its equivalences).
func (d *DistinctOn) Schema() []Column                 { return d.Input.Schema() }
func (d *DistinctOn) Children() []Node                 { return []Node{d.Input} }
func (d *DistinctOn) Ordering() ordering.Props         { return d.Input.Ordering() }
func (d *DistinctOn) RequiredOrdering() []ordering.Lex { return []ordering.Lex{d.Order} }
func (d *DistinctOn) PreservesOrder() []bool           { return []bool{true} }
