package exec

import (
	"context"
	"math"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// FrameUnit is how a window frame's offsets count: RANGE (by the order
// key's value; peers always together), ROWS, or GROUPS (peer groups).
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

// FrameBound is one end of a frame. For ROWS and GROUPS an offset bound
// counts N (>= 0) rows or peer groups; for RANGE, Value is a constant
// expression (a number for a numeric order key, an interval for a date
// or timestamp one) evaluated once.
type FrameBound struct {
	Kind  BoundKind
	N     int64
	Value expr.Expr
}

// WindowFrame is a frame clause. DefaultFrame is Postgres' default.
type WindowFrame struct {
	Unit       FrameUnit
	Start, End FrameBound
	Exclude    FrameExclude
}

// DefaultFrame is RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW: the
// partition up to the current row's last peer (all of it without ORDER
// BY, where every row is a peer).
func DefaultFrame() WindowFrame {
	return WindowFrame{Unit: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}
}

// layout is what frame computation needs of the sorted, materialized
// input: partition and peer-group extents per row.
type layout struct {
	n            int
	pstart, pend []int // row i's partition [pstart, pend)
	gstart, gend []int // row i's peer group [gstart, gend)
	gidx         []int // row i's peer group number within its partition
}

// rangeOffsets decides RANGE offset bounds: inRange is Postgres' in_range
// support function over the order key of rows j (val) and i (base), and
// null reports a NULL key.
type rangeOffsets struct {
	null       func(i int) bool
	nullsFirst bool
	desc       bool
	inRange    func(j, i int, sub, less bool) (bool, error)
}

// frameBounds computes row i's frame [s[i], e[i]) (e >= s) for every row.
func frameBounds(l *layout, f WindowFrame, ro []*rangeOffsets) (s, e []int, err error) {
	s, e = make([]int, l.n), make([]int, l.n)
	if err := boundRows(l, f.Unit, f.Start, true, ro[0], s); err != nil {
		return nil, nil, err
	}
	if err := boundRows(l, f.Unit, f.End, false, ro[1], e); err != nil {
		return nil, nil, err
	}
	for i := range e {
		e[i] = max(e[i], s[i])
	}
	return s, e, nil
}

func satAdd(i int, n int64) int {
	if n > int64(math.MaxInt32) {
		return math.MaxInt32 + i
	}
	return i + int(n)
}

// boundRows fills out[i] with the row where frame bound b puts the start
// (start) or the exclusive end of row i's frame.
func boundRows(l *layout, unit FrameUnit, b FrameBound, start bool, ro *rangeOffsets, out []int) error {
	clamp := func(i, v int) int { return min(max(v, l.pstart[i]), l.pend[i]) }
	switch b.Kind {
	case UnboundedPreceding:
		copy(out, l.pstart)
		return nil
	case UnboundedFollowing:
		copy(out, l.pend)
		return nil
	case CurrentRow:
		for i := range out {
			switch {
			case unit == FrameRows && start:
				out[i] = i
			case unit == FrameRows:
				out[i] = i + 1
			case start:
				out[i] = l.gstart[i]
			default:
				out[i] = l.gend[i]
			}
		}
		return nil
	}
	back := b.Kind == OffsetPreceding
	switch unit {
	case FrameRows:
		for i := range out {
			v := satAdd(0, b.N)
			if back {
				v = -v
			}
			if !start {
				v++
			}
			out[i] = clamp(i, i+v)
		}
	case FrameGroups:
		// Group starts of the current partition, by group number.
		var starts []int
		for i := 0; i < l.n; i++ {
			if i == l.pstart[i] {
				starts = starts[:0]
				for j := i; j < l.pend[i]; j = l.gend[j] {
					starts = append(starts, j)
				}
			}
			g := l.gidx[i]
			if back {
				g -= int(min(b.N, int64(g)+1))
			} else {
				g = satAdd(g, b.N)
			}
			if !start {
				g++ // the exclusive end is the start of the next group
			}
			switch {
			case g < 0:
				out[i] = l.pstart[i]
			case g >= len(starts):
				out[i] = l.pend[i]
			default:
				out[i] = starts[g]
			}
		}
	default:
		return rangeBound(l, b, start, ro, out)
	}
	return nil
}

// rangeBound walks Postgres' frame head (start) or tail with in_range,
// exactly as nodeWindowAgg's update_frameheadpos/update_frametailpos do:
// a pointer per partition that only moves forward, so linear. Rows with a
// NULL key have their NULL peers as the frame for offset bounds, and rows
// with a key never reach the NULLs.
func rangeBound(l *layout, b FrameBound, start bool, ro *rangeOffsets, out []int) error {
	sub := b.Kind == OffsetPreceding
	less := !start
	if ro.desc {
		sub, less = !sub, !less
	}
	var p int
	for i := 0; i < l.n; i++ {
		if i == l.pstart[i] {
			p = i
		}
		if ro.null(i) {
			if start {
				out[i] = l.gstart[i]
			} else {
				out[i] = l.gend[i]
			}
			continue
		}
		// The non-NULL rows of the partition.
		lo, hi := l.pstart[i], l.pend[i]
		if ro.nullsFirst {
			for lo < hi && ro.null(lo) {
				lo = l.gend[lo]
			}
		} else if hi > lo && ro.null(hi-1) {
			hi = l.gstart[hi-1]
		}
		p = max(p, lo)
		for p < hi {
			ok, err := ro.inRange(p, i, sub, less)
			if err != nil {
				return err
			}
			if start == ok { // head stops at the first in range, tail at the first out
				break
			}
			p++
		}
		out[i] = p
	}
	return nil
}

// newRangeOffsets prepares in_range for a RANGE offset bound over the
// order key column key of type kt, with the offset value off (a constant).
func newRangeOffsets(ctx context.Context, key arrow.Array, kt sqltypes.Type, order SortKey, off expr.Expr, env eval.Env) (*rangeOffsets, error) {
	ro := &rangeOffsets{null: key.IsNull, nullsFirst: order.nullsFirst(), desc: order.Desc}
	if off == nil {
		return ro, nil
	}
	v, err := constValue(ctx, off, env)
	if err != nil {
		return nil, err
	}
	defer v.Release()
	if v.IsNull(0) {
		return nil, sqlerr.New(codeNullValueNotAllowed, "frame starting or ending offset must not be null")
	}
	negative := func() error {
		return sqlerr.New(codeInvalidFrameSize, "invalid preceding or following size in window function")
	}
	ot := off.Type()
	switch {
	case kt.IsInteger() && ot.IsInteger():
		o, err := readIntCol(v, ot)
		if err != nil {
			return nil, err
		}
		if o[0] < 0 {
			return nil, negative()
		}
		keys, err := readIntCol(key, kt)
		if err != nil {
			return nil, err
		}
		ro.inRange = func(j, i int, sub, less bool) (bool, error) {
			return inRangeInt(keys[j], keys[i], o[0], sub, less), nil
		}
	case (kt.Kind == sqltypes.Float4 || kt.Kind == sqltypes.Float8) && (ot.Kind == sqltypes.Float4 || ot.Kind == sqltypes.Float8):
		o := readFloatCol(v, ot)[0]
		if o < 0 || math.IsNaN(o) {
			return nil, negative()
		}
		keys := readFloatCol(key, kt)
		ro.inRange = func(j, i int, sub, less bool) (bool, error) {
			return inRangeFloat(keys[j], keys[i], o, sub, less), nil
		}
	case kt.Kind == sqltypes.Numeric && ot.Kind == sqltypes.Numeric:
		o := v.(*array.Decimal128).Value(0)
		if o.Sign() < 0 {
			return nil, negative()
		}
		ks, os := inScale(kt), inScale(ot)
		sc := max(ks, os)
		ob := new(big.Int).Mul(o.BigInt(), pow10(sc-os))
		d := key.(*array.Decimal128)
		keyAt := func(i int) *big.Int { return new(big.Int).Mul(d.Value(i).BigInt(), pow10(sc-ks)) }
		ro.inRange = func(j, i int, sub, less bool) (bool, error) {
			sum := keyAt(i)
			if sub {
				sum.Sub(sum, ob)
			} else {
				sum.Add(sum, ob)
			}
			c := keyAt(j).Cmp(sum)
			if less {
				return c <= 0, nil
			}
			return c >= 0, nil
		}
	case (kt.Kind == sqltypes.Timestamp || kt.Kind == sqltypes.TimestampTZ || kt.Kind == sqltypes.Date) && ot.Kind == sqltypes.Interval:
		iv := v.(*array.MonthDayNanoInterval).Value(0)
		if eval.IntervalKey(iv).Sign() < 0 {
			return nil, negative()
		}
		neg := arrow.MonthDayNanoInterval{Months: -iv.Months, Days: -iv.Days, Nanoseconds: -iv.Nanoseconds}
		var keys []int64
		if kt.Kind == sqltypes.Date {
			days := eval.FixedValues[int32](key)
			keys = make([]int64, len(days))
			for i, d := range days {
				switch d {
				case sqltypes.DateInfinity:
					keys[i] = sqltypes.TimestampInfinity
				case sqltypes.DateNegInfinity:
					keys[i] = sqltypes.TimestampNegInfinity
				default:
					keys[i] = int64(d) * vec.UsPerDay
				}
			}
		} else {
			keys = eval.FixedValues[int64](key)
		}
		loc := time.UTC
		if kt.Kind == sqltypes.TimestampTZ && env.Options != nil && env.Options.Location != nil {
			loc = env.Options.Location
		}
		ro.inRange = func(j, i int, sub, less bool) (bool, error) {
			d := iv
			if sub {
				d = neg
			}
			sum, err := vec.AddInterval(keys[i], d, loc)
			if err != nil {
				// Out of the timestamp range: the true bound lies beyond
				// every value (Postgres' in_range_timestamp_interval).
				return sub != less, nil
			}
			if less {
				return keys[j] <= sum, nil
			}
			return keys[j] >= sum, nil
		}
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", kt, ot)
	}
	return ro, nil
}

// inRangeInt is Postgres' in_range_int8_int8: is val <= base ± off
// (less) or >= it; a sum beyond int64 lies beyond every value.
func inRangeInt(val, base, off int64, sub, less bool) bool {
	if sub {
		off = -off
	}
	sum := base + off
	if (off > 0 && sum < base) || (off < 0 && sum > base) {
		if sub {
			return !less
		}
		return less
	}
	if less {
		return val <= sum
	}
	return val >= sum
}

// inRangeFloat is Postgres' in_range_float8_float8 (NaN sorts above
// everything; an infinite offset from an infinite base stays in range).
func inRangeFloat(val, base, off float64, sub, less bool) bool {
	if math.IsNaN(val) {
		if math.IsNaN(base) {
			return true
		}
		return !less
	}
	if math.IsNaN(base) {
		return less
	}
	if math.IsInf(off, 0) && math.IsInf(base, 0) && ((sub && base > 0) || (!sub && base < 0)) {
		return true
	}
	sum := base + off
	if sub {
		sum = base - off
	}
	if less {
		return val <= sum
	}
	return val >= sum
}

// constValue evaluates a constant expression to a one-row array.
func constValue(ctx context.Context, e expr.Expr, env eval.Env) (arrow.Array, error) {
	ev, err := eval.Compile(e, arrow.NewSchema(nil, nil), env)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer b.Release()
	return ev.Eval(ctx, b)
}

// SQLSTATEs sqlerr lacks, as Postgres names them.
const (
	codeNullValueNotAllowed = "22004" // null_value_not_allowed
	codeInvalidFrameSize    = "22013" // invalid_preceding_or_following_size
	codeInvalidNtile        = "22014" // invalid_argument_for_ntile_function
	codeInvalidNthValue     = "22016" // invalid_argument_for_nth_value_function
)

// codeWindowingError is Postgres' windowing_error.
const codeWindowingError = "42P20"
