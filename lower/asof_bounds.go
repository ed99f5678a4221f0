package lower

import (
	"time"

	"github.com/asofsql/asofsql/exec/asof"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqltypes"
)

// asofRange converts the range of one ASOF right input to the operator's
// bounds. Bounds the planner could not fold (parameters, constant
// expressions such as -10 + 1) are evaluated here, once per execution, and
// checked as the planner checks literal ones (22023 when lo > hi, at the
// lower bound). empty reports a NUMERIC range that rounding to the
// column's scale emptied: it matches nothing.
func (b *builder) asofRange(n *planner.AsofJoin, r *planner.AsofRight) (lo, hi asof.Bound, empty bool, err error) {
	lc := n.Left.Schema()[r.LeftOn]
	if r.OnType.Kind != sqltypes.Unknown {
		lc.Type = r.OnType // the type t is compared in: the bounds' unit
	}
	plo, phi := r.Lo, r.Hi
	deferred := false
	for i, pb := range []*planner.Bound{&plo, &phi} {
		var e expr.Expr = pb.Expr
		if pb.Param != nil {
			e = pb.Param
		}
		if e == nil {
			continue
		}
		deferred = true
		v, err := b.constant(e)
		if err != nil {
			return lo, hi, false, err
		}
		pos := pb.Pos
		if *pb, err = planner.AsofBoundValue(&expr.Literal{Value: v, T: e.Type()}, lc.Type, lc.Name, i == 0, pos, b.env.Eval.Options); err != nil {
			return lo, hi, false, err
		}
	}
	if deferred {
		if err := planner.CheckAsofRange(plo, phi, lc.Type, r.Lo.Pos); err != nil {
			return lo, hi, false, err
		}
	}
	conv := func(pb planner.Bound) asof.Bound {
		if pb.Unbounded {
			return asof.Unbounded
		}
		if pb.Cal != nil {
			// Months and days are added in the session's time zone
			// for TIMESTAMPTZ, in UTC (no zone) otherwise.
			var loc *time.Location
			if lc.Type.Kind == sqltypes.TimestampTZ && b.env.Eval.Options != nil {
				loc = b.env.Eval.Options.Location
			}
			return asof.Bound{Int: pb.Int, Cal: &asof.Calendar{Months: pb.Cal.Months, Days: pb.Cal.Days, Micros: pb.Cal.Microseconds, Loc: loc}}
		}
		return asof.Bound{Int: pb.Int, Float: pb.Float, Dec: pb.Dec, HasDec: pb.HasDec, Exclusive: pb.Exclusive}
	}
	return conv(plo), conv(phi), planner.AsofRangeEmpty(plo, phi), nil
}
