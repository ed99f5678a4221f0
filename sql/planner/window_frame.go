package planner

import (
	"fmt"

	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// FrameUnit is how a frame's offsets count.
type FrameUnit uint8

const (
	FrameRange FrameUnit = iota
	FrameRows
	FrameGroups
)

// BoundKind is where a frame bound lies relative to the current row.
type BoundKind uint8

const (
	UnboundedPreceding BoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameExclude is a frame's EXCLUDE option.
type FrameExclude uint8

const (
	ExcludeNoOthers FrameExclude = iota
	ExcludeCurrentRow
	ExcludeGroup
	ExcludeTies
)

// FrameBound is one end of a frame; Offset (for the offset kinds) is a
// constant expression: bigint for ROWS and GROUPS, for RANGE the type
// matching the single ORDER BY key (a number, or an interval for dates
// and timestamps).
type FrameBound struct {
	Kind   BoundKind
	Offset expr.Expr
}

// Frame is a window frame clause. The zero Frame is Postgres' default,
// RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, once End is
// CurrentRow: use DefaultFrame.
type Frame struct {
	Unit       FrameUnit
	Start, End FrameBound
	Exclude    FrameExclude
}

// DefaultFrame is Postgres' default frame.
func DefaultFrame() Frame {
	return Frame{Unit: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}
}

// String renders the frame as SQL (for EXPLAIN).
func (f Frame) String() string {
	unit := [...]string{"RANGE", "ROWS", "GROUPS"}[f.Unit]
	bound := func(b FrameBound) string {
		switch b.Kind {
		case UnboundedPreceding:
			return "UNBOUNDED PRECEDING"
		case OffsetPreceding:
			return exprSQL(b.Offset) + " PRECEDING"
		case CurrentRow:
			return "CURRENT ROW"
		case OffsetFollowing:
			return exprSQL(b.Offset) + " FOLLOWING"
		}
		return "UNBOUNDED FOLLOWING"
	}
	s := unit + " BETWEEN " + bound(f.Start) + " AND " + bound(f.End)
	if f.Exclude != ExcludeNoOthers {
		s += " EXCLUDE " + [...]string{"", "CURRENT ROW", "GROUP", "TIES"}[f.Exclude]
	}
	return s
}

// effWindow is a window specification with named-window references
// resolved: the clauses in force, from whichever definition gave them.
type effWindow struct {
	part  *ast.PartitionByClause
	order *ast.OrderByClause
	frame *ast.FrameClause
}

// windowDefs binds a query level's WINDOW clause: each definition may
// build on an earlier one, by Postgres' rules.
func (b *binder) windowDefs(specs []ast.WindowSpec) (map[string]effWindow, error) {
	defs := map[string]effWindow{}
	for i := range specs {
		s := &specs[i]
		name := s.Name.O
		if _, dup := defs[name]; dup {
			return nil, sqlerr.New(codeWindowingError, "window %q is already defined", name)
		}
		ew, err := b.resolveWindow(s, defs)
		if err != nil {
			return nil, err
		}
		defs[name] = ew
	}
	return defs, nil
}

// resolveWindow applies a specification to the window it names, if any:
// OVER w takes w as it is; OVER (w ...) may add an ORDER BY w lacks and
// a frame, and w itself must have no frame.
func (b *binder) resolveWindow(s *ast.WindowSpec, defs map[string]effWindow) (effWindow, error) {
	own := effWindow{part: s.PartitionBy, order: s.OrderBy, frame: s.Frame}
	ref := s.Ref.O
	if s.OnlyAlias {
		ref = s.Name.O
	}
	if ref == "" {
		return own, nil
	}
	base, ok := defs[ref]
	if !ok {
		return own, sqlerr.New(sqlerr.UndefinedObject, "window %q does not exist", ref)
	}
	if s.OnlyAlias {
		return base, nil
	}
	switch {
	case own.part != nil:
		return own, sqlerr.New(codeWindowingError, "cannot override PARTITION BY clause of window %q", ref)
	case own.order != nil && base.order != nil:
		return own, sqlerr.New(codeWindowingError, "cannot override ORDER BY clause of window %q", ref)
	case base.frame != nil:
		return own, sqlerr.New(codeWindowingError, "cannot copy window %q because it has a frame clause", ref).
			WithHint("Omit the parentheses in this OVER clause.")
	}
	if own.order == nil {
		own.order = base.order
	}
	own.part = base.part
	return own, nil
}

// bindFrame binds a frame clause (nil: the default) over the window's
// ORDER BY keys (their types, in order).
func (b *binder) bindFrame(fc *ast.FrameClause, orderTypes []sqltypes.Type, sc *scope, at ast.ExprNode) (Frame, error) {
	f := DefaultFrame()
	if fc == nil {
		return f, nil
	}
	switch fc.Type {
	case ast.Rows:
		f.Unit = FrameRows
	case ast.Groups:
		f.Unit = FrameGroups
	}
	unit := [...]string{"RANGE", "ROWS", "GROUPS"}[f.Unit]
	if f.Unit == FrameGroups && len(orderTypes) == 0 {
		return f, sqlerr.New(codeWindowingError, "GROUPS mode requires an ORDER BY clause").WithPosition(b.pos(at))
	}
	f.Exclude = FrameExclude(b.st.FrameExclude[fc])
	bound := func(fb ast.FrameBound, start bool) (FrameBound, error) {
		var out FrameBound
		switch {
		case fb.Type == ast.CurrentRow:
			out.Kind = CurrentRow
			return out, nil
		case fb.UnBounded && fb.Type == ast.Preceding:
			out.Kind = UnboundedPreceding
			return out, nil
		case fb.UnBounded:
			out.Kind = UnboundedFollowing
			return out, nil
		case fb.Type == ast.Preceding:
			out.Kind = OffsetPreceding
		default:
			out.Kind = OffsetFollowing
		}
		if fb.Expr == nil || (fb.Unit != ast.TimeUnitInvalid && fb.Unit != parser.FrameOffsetUnit) {
			return out, sqlerr.New(sqlerr.FeatureNotSupported, "MySQL's INTERVAL n unit frame offsets are not supported; write INTERVAL '5 minutes'").WithPosition(b.pos(at))
		}
		e, err := b.bindExpr(fb.Expr, &exprCtx{sc: sc, clause: "window frame offsets"})
		if err != nil {
			return out, err
		}
		if hasColumn(e) {
			return out, sqlerr.New(codeInvalidColumnReference, "argument of %s must not contain variables", unit).WithPosition(b.pos(fb.Expr))
		}
		if f.Unit != FrameRange {
			if e, err = b.coerce(resolveUnknown(e), sqltypes.Int8Type, fb.Expr, "argument of "+unit); err != nil {
				return out, err
			}
			out.Offset = e
			return out, nil
		}
		if len(orderTypes) != 1 {
			return out, sqlerr.New(codeWindowingError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column").WithPosition(b.pos(fb.Expr))
		}
		kt, et := orderTypes[0], e.Type()
		var want sqltypes.Type
		switch {
		case kt.IsInteger() && (et.IsInteger() || et.Kind == sqltypes.Unknown):
			want = et
			if et.Kind == sqltypes.Unknown {
				want = sqltypes.Int8Type
			}
		case kt.Kind == sqltypes.Float4 || kt.Kind == sqltypes.Float8:
			want = sqltypes.Float8Type
		case kt.Kind == sqltypes.Numeric:
			want = unconstrained(sqltypes.Numeric)
		case kt.Kind == sqltypes.Date || kt.Kind == sqltypes.Timestamp || kt.Kind == sqltypes.TimestampTZ:
			want = sqltypes.IntervalType
		default:
			return out, sqlerr.New(sqlerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", kt).WithPosition(b.pos(fb.Expr))
		}
		if want.Kind != et.Kind && !(et.Kind == sqltypes.Unknown || (want.Kind == sqltypes.Float8 && (et.IsInteger() || et.Kind == sqltypes.Numeric || et.Kind == sqltypes.Float4)) ||
			(want.Kind == sqltypes.Numeric && et.IsInteger())) {
			return out, sqlerr.New(sqlerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", kt, et).
				WithHint("Cast the offset value to an appropriate type.").WithPosition(b.pos(fb.Expr))
		}
		if e, err = b.coerce(e, want, fb.Expr, "RANGE offset"); err != nil {
			return out, err
		}
		out.Offset = e
		return out, nil
	}
	var err error
	if f.Start, err = bound(fc.Extent.Start, true); err != nil {
		return f, err
	}
	if f.End, err = bound(fc.Extent.End, false); err != nil {
		return f, err
	}
	switch {
	case f.Start.Kind == UnboundedFollowing:
		err = fmt.Errorf("frame start cannot be UNBOUNDED FOLLOWING")
	case f.End.Kind == UnboundedPreceding:
		err = fmt.Errorf("frame end cannot be UNBOUNDED PRECEDING")
	case f.Start.Kind == CurrentRow && f.End.Kind == OffsetPreceding:
		err = fmt.Errorf("frame starting from current row cannot have preceding rows")
	case f.Start.Kind == OffsetFollowing && (f.End.Kind == OffsetPreceding || f.End.Kind == CurrentRow):
		err = fmt.Errorf("frame starting from following row cannot have preceding rows")
	}
	if err != nil {
		return f, sqlerr.New(codeWindowingError, "%s", err.Error()).WithPosition(b.pos(at))
	}
	return f, nil
}

// codeInvalidColumnReference is Postgres' invalid_column_reference.
const codeInvalidColumnReference = "42P10"

func hasColumn(e expr.Expr) bool {
	found := false
	expr.Walk(e, func(x expr.Expr) bool {
		if _, ok := x.(*expr.Column); ok {
			found = true
		}
		return !found
	})
	return found
}

func unconstrained(k sqltypes.Kind) sqltypes.Type {
	return sqltypes.Type{Kind: k, Precision: sqltypes.NoLimit, Scale: sqltypes.NoLimit, Length: sqltypes.NoLimit}
}
