package asof

import (
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
)

// Kind is the join kind of one right input.
type Kind uint8

const (
	// Inner drops left rows that have no winner in this right input.
	Inner Kind = iota
	// Left keeps them, with this right input's columns NULL.
	Left
	// Semi keeps only the left rows that have a winner, and outputs no
	// column of this right input (Payload is ignored).
	Semi
	// Anti keeps only the left rows without a winner, and outputs no
	// column of this right input (Payload is ignored).
	Anti
	// RightOuter is INNER plus, once each, every right row that is the
	// winner of no left row, with the left columns NULL. The join must
	// have this one right input, not key-major.
	RightOuter
	// FullOuter is LEFT plus those right rows.
	FullOuter
)

func (k Kind) String() string {
	switch k {
	case Left:
		return "LEFT"
	case Semi:
		return "SEMI"
	case Anti:
		return "ANTI"
	case RightOuter:
		return "RIGHT"
	case FullOuter:
		return "FULL"
	}
	return "INNER"
}

// outer reports the kinds that also output unmatched right rows.
func (k Kind) outer() bool { return k == RightOuter || k == FullOuter }

// filters reports whether the kind drops left rows by whether they have a
// winner (every kind but LEFT and FULL): its kernel reports the winners
// per row.
func (k Kind) filters() bool { return k != Left && k != FullOuter }

// Tie decides between two eligible rows at equal distance on opposite sides
// of the left row's t (only possible when Lo < 0 < Hi).
type Tie uint8

const (
	// PreferEarlier takes the row with Δ < 0 (the default).
	PreferEarlier Tie = iota
	// PreferLater takes the row with Δ > 0.
	PreferLater
)

func (t Tie) String() string {
	if t == PreferLater {
		return "PREFER LATER"
	}
	return "PREFER EARLIER"
}

// Bound is one end of the eligibility range on Δ = right.t − left.t.
// Int is used for integer, date, timestamp and decimal on columns, in the
// column's own physical unit (days, the timestamp's unit, the decimal's
// unscaled units); Float for floating-point on columns. A decimal bound
// beyond int64 units is Dec (HasDec set). String, binary and boolean on
// columns take only Unbounded or 0 (the compatibility inequality forms).
type Bound struct {
	Unbounded bool
	Int       int64
	Float     float64
	Dec       decimal128.Num
	HasDec    bool
	// Cal, when set, is an INTERVAL with months on a date or timestamp
	// on column: the edge is computed with calendar arithmetic (Int is
	// then only a sign hint, see Calendar).
	Cal *Calendar
	// Exclusive leaves the bound's own value out (a strict inequality):
	// the window edge moves one step on the column's number line, the
	// next integer or the next float, so no rounding can let it in.
	Exclusive bool
}

// IntBound returns an inclusive integer bound.
func IntBound(v int64) Bound { return Bound{Int: v, Float: float64(v)} }

// DecBound returns an inclusive decimal bound in unscaled units.
func DecBound(v decimal128.Num) Bound {
	b := Bound{Dec: v, HasDec: true}
	if bi := v.BigInt(); bi.IsInt64() {
		b.Int = bi.Int64()
	}
	return b
}

// FloatBound returns an inclusive floating-point bound.
func FloatBound(v float64) Bound { return Bound{Float: v} }

// Unbounded is the open end of a compatibility inequality form.
var Unbounded = Bound{Unbounded: true}

// Right describes one right input of the join and how it matches.
type Right struct {
	// Name identifies the input in errors ("quotes").
	Name  string
	Input operator.Operator
	// LeftOn and On are the indexes of t in the left and right schemas.
	LeftOn, On int
	// LeftKeys and Keys are the by-key columns, pairwise equal.
	LeftKeys, Keys []int
	// NullSafe, when set, has one entry per key: true compares that key
	// with IS NOT DISTINCT FROM (NULL matches NULL) instead of '='. Not
	// with KeyMajor.
	NullSafe []bool
	// Lo and Hi bound Δ inclusively.
	Lo, Hi Bound
	// Empty says the range matches nothing although it was not written
	// reversed (a NUMERIC range that rounding to the column's scale
	// crossed): no left row has an eligible row; Lo and Hi are ignored.
	Empty bool
	Tie   Tie
	Kind  Kind
	// Payload lists the right columns to output, in order (the on column
	// may be among them: its value is then the matched right t).
	Payload []int
	// LeftCond, when set, is the extra ON conditions on the left input
	// alone: a left row failing it has no eligible rows here (spec §2.5).
	// Not with KeyMajor.
	LeftCond Cond
	// Cond, when set, is the extra ON conditions on this input alone, for
	// RIGHT and FULL (the other kinds filter the input instead): a right
	// row failing it is eligible for no left row and comes out unmatched.
	Cond Cond
	// PairCond, when set, is the extra ON conditions reading both inputs
	// (spec §2.5): a right row is eligible for a left row only when it
	// holds for the pair (false and NULL fail). It is evaluated over
	// batches of pairs whose columns are the left columns PairLeft, then
	// the right columns PairRight (indexes into the inputs' own schemas).
	// The join must have this one right input, ordered by t alone, and an
	// on column on the number line (not text, bytea, boolean or a
	// numeric wider than 18 digits). pairs.go.
	PairCond            Cond
	PairLeft, PairRight []int
	// KeyMajor says the left input and this right input are both ordered
	// by (keys..., t) — keys ascending with NULLs last, strings bytewise,
	// t ascending within each key — instead of by t alone.
	KeyMajor bool
}

// Options configure a Join.
type Options struct {
	Allocator memory.Allocator
	// LeftName identifies the left input in errors.
	LeftName string
	// Serial runs every right input on the calling goroutine. It is the
	// default when GOMAXPROCS is 1; both modes give identical output.
	Serial bool
	// hashBytes, when set, replaces the key hash (tests force collisions).
	hashBytes func([]byte) uint64
	hashU64   func(uint64) uint64
	// hashClear are bits cleared from every byte key's hash, in the
	// lookups' written-out loop too (tests force collisions there).
	hashClear uint64
	// compactSlack overrides the dead rows tolerated before compaction
	// (negative means zero: compact at every chance).
	compactSlack int64
	// wideDecimals keeps every decimal on column on the 128-bit kernel
	// (tests compare it with the number-line fast path).
	wideDecimals bool
	// generalOnly keeps every input off the backward kernel (tests compare
	// the kernel with the general path).
	generalOnly bool
	// pool, when set, is the output buffer pool the join uses instead of
	// one of its own, and leaves open at Close: the morsels' joins share
	// their Morsel's, so a buffer the consumer releases after a morsel's
	// join has closed is reused by a later morsel (morsel.go).
	pool *operator.Pool
	// dicts, when set, gives right input i's key dictionary (when it
	// heads a group of its own): the morsels' joins share one per input,
	// kept for the whole join, so each join starts with every key known
	// instead of interning them all again. The kernels already take ids
	// beyond their own state as keys of which they read no rows.
	dicts []*keyDict
	// leftChecked says the left on columns were checked in order over the
	// whole input before the join reads them (the morsels' cuts): the
	// join does not check them again.
	leftChecked bool
}

// spec is a validated Right plus derived facts.
type spec struct {
	Right
	leftTName string // the left on column's name, for messages
	onKind    timeKind
	leftKind  timeKind
	keyEnc    keyEncoding
	// leftEnc encodes the left input's keys for this input (keyEnc but
	// for the conversions of keys of different types).
	leftEnc keyEncoding
	// condCol is the column of the RIGHT/FULL tee holding Cond's result
	// (0: no Cond).
	condCol int
	// ord is set when t is compared by the comparison kernel (comparison.go)
	// instead of mapped to the number line.
	ord ordClass
}

func validate(left *arrow.Schema, rights []Right, opts *Options) ([]spec, error) {
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.LeftName == "" {
		opts.LeftName = "left input"
	}
	if runtime.GOMAXPROCS(0) == 1 {
		opts.Serial = true
	}
	if len(rights) == 0 {
		return nil, sqlerr.New(sqlerr.InternalError, "ASOF join needs at least one right input")
	}
	specs := make([]spec, len(rights))
	for i, r := range rights {
		if r.Input == nil {
			return nil, sqlerr.New(sqlerr.InternalError, "ASOF join right input %d is nil", i)
		}
		if r.Name == "" {
			r.Name = fmt.Sprintf("right input %d", i+1)
		}
		if r.Kind > FullOuter {
			return nil, sqlerr.New(sqlerr.InternalError, "ASOF join kind %d of %s is invalid", r.Kind, r.Name)
		}
		if r.Kind.outer() && (len(rights) > 1 || r.KeyMajor) {
			return nil, sqlerr.New(sqlerr.InternalError, "ASOF %s join with %s must have one right input, ordered by t alone", r.Kind, r.Name)
		}
		if r.PairCond != nil && (len(rights) > 1 || r.KeyMajor) {
			return nil, sqlerr.New(sqlerr.InternalError, "ASOF join with %s: a condition on both inputs needs one right input, ordered by t alone", r.Name)
		}
		if r.Kind == Semi || r.Kind == Anti {
			// Only the left columns come out.
			r.Payload = nil
		}
		if r.Empty {
			// Both edges one step inside Δ = 0: every window is empty
			// (windowFor and decOps.window see its lo above its hi).
			r.Lo, r.Hi = Bound{Exclusive: true}, Bound{Exclusive: true}
		}
		rs := r.Input.Schema()
		if err := checkCol(left, r.LeftOn, opts.LeftName, "on"); err != nil {
			return nil, err
		}
		if err := checkCol(rs, r.On, r.Name, "on"); err != nil {
			return nil, err
		}
		lt, rt := left.Field(r.LeftOn), rs.Field(r.On)
		notComparable := func() error {
			return sqlerr.New(sqlerr.DatatypeMismatch,
				"ASOF on columns are not comparable: %s.%s is %s but %s.%s is %s",
				opts.LeftName, lt.Name, lt.Type, r.Name, rt.Name, rt.Type)
		}
		var lk, rk timeKind
		lo, ro := ordClassOf(lt.Type), ordClassOf(rt.Type)
		if lo != ordNone || ro != ordNone {
			if lo != ro || lo == ordDecimal && lt.Type.(*arrow.Decimal128Type).Scale != rt.Type.(*arrow.Decimal128Type).Scale {
				return nil, notComparable()
			}
			if err := checkOrdRange(r, rt.Type, lo); err != nil {
				return nil, err
			}
			if lo == ordDecimal && !opts.wideDecimals {
				if k, blo, bhi, ok := decimalOnLine(lt.Type, rt.Type, r.Lo, r.Hi); ok {
					lo, lk, rk = ordNone, k, k
					r.Lo, r.Hi = blo, bhi
				}
			}
		} else {
			var err error
			if lk, err = timeKindOf(lt.Type); err != nil {
				return nil, fmt.Errorf("ASOF on column %q of %s: %w", lt.Name, opts.LeftName, err)
			}
			if rk, err = timeKindOf(rt.Type); err != nil {
				return nil, fmt.Errorf("ASOF on column %q of %s: %w", rt.Name, r.Name, err)
			}
			if !lk.comparable(rk) {
				return nil, notComparable()
			}
			if err := calendarBounds(&r, rk); err != nil {
				return nil, err
			}
			if err := checkRange(r, rk); err != nil {
				return nil, err
			}
		}
		if len(r.LeftKeys) != len(r.Keys) {
			return nil, sqlerr.New(sqlerr.InternalError, "ASOF join with %s: %d left keys but %d right keys", r.Name, len(r.LeftKeys), len(r.Keys))
		}
		if r.Cond != nil && !r.Kind.outer() {
			return nil, sqlerr.New(sqlerr.InternalError, "ASOF %s join with %s takes no right condition: filter its input", r.Kind, r.Name)
		}
		if r.KeyMajor && (slices.Contains(r.NullSafe, true) || r.LeftCond != nil) {
			return nil, sqlerr.New(sqlerr.InternalError, "ASOF join with %s: null-safe keys or a left condition cannot be key-major", r.Name)
		}
		if r.PairCond != nil && lo != ordNone {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"ASOF JOIN condition on both inputs with an on column of type %s is not supported", rt.Type).
				WithHint("Conditions on both inputs work on integer, date, timestamp, floating-point and numeric (up to 18 digits) on columns; move this one to WHERE to filter the result instead.")
		}
		for _, c := range r.PairLeft {
			if err := checkCol(left, c, opts.LeftName, "condition"); err != nil {
				return nil, err
			}
		}
		for _, c := range r.PairRight {
			if err := checkCol(rs, c, r.Name, "condition"); err != nil {
				return nil, err
			}
		}
		enc, lenc, err := newKeyEncoding(left, rs, r.LeftKeys, r.Keys, r.NullSafe, opts.LeftName, r.Name)
		if err != nil {
			return nil, err
		}
		for _, p := range r.Payload {
			if err := checkCol(rs, p, r.Name, "payload"); err != nil {
				return nil, err
			}
		}
		if r.KeyMajor && !slices.Equal(enc.cols, lenc.cols) {
			return nil, sqlerr.New(sqlerr.InternalError, "ASOF join with %s: keys of different types cannot be key-major", r.Name)
		}
		specs[i] = spec{Right: r, leftTName: lt.Name, onKind: rk, leftKind: lk, keyEnc: enc, leftEnc: lenc, ord: lo}
	}
	return specs, nil
}

// decimalOnLine decides, from the types and bounds alone, whether a decimal
// on column can run on the int64 number line: both columns' precision is at
// most 18 (every value fits in int64 unscaled units) and each bound is
// unbounded or fits in int64 unscaled units. Then l+bound is computed with
// the number line's saturation exactly as the 128-bit kernel computes it
// (an edge beyond int64 lies beyond every value there too) and distances
// of int64 values are exact in uint64, so both kernels give one answer.
// The bounds it returns carry their value in Int.
func decimalOnLine(lt, rt arrow.DataType, lo, hi Bound) (timeKind, Bound, Bound, bool) {
	ld, rd := lt.(*arrow.Decimal128Type), rt.(*arrow.Decimal128Type)
	if ld.Precision > maxLineDecimalPrecision || rd.Precision > maxLineDecimalPrecision {
		return timeKind{}, lo, hi, false
	}
	fit := func(b *Bound) bool {
		if b.Unbounded || !b.HasDec {
			return true
		}
		v := b.Dec
		if h, l := v.HighBits(), v.LowBits(); h == 0 && l <= math.MaxInt64 || h == -1 && l > math.MaxInt64 {
			b.Int = int64(l)
			return true
		}
		return false
	}
	if !fit(&lo) || !fit(&hi) {
		return timeKind{}, lo, hi, false
	}
	return timeKind{class: classDecimal, scale: ld.Scale}, lo, hi, true
}

// maxLineDecimalPrecision is the largest decimal precision whose unscaled
// values all fit in int64 (10^18 - 1 < 2^63).
const maxLineDecimalPrecision = 18

func checkCol(s *arrow.Schema, i int, input, role string) error {
	if i < 0 || i >= s.NumFields() {
		return sqlerr.New(sqlerr.InternalError, "ASOF %s column index %d out of range for %s (%d columns)", role, i, input, s.NumFields())
	}
	return nil
}

func checkRange(r Right, k timeKind) error {
	if r.Lo.Unbounded || r.Hi.Unbounded || r.Empty || r.Lo.Cal != nil || r.Hi.Cal != nil {
		return nil
	}
	if k.float {
		if r.Lo.Float != r.Lo.Float || r.Hi.Float != r.Hi.Float {
			return sqlerr.New(sqlerr.InvalidParameterValue, "ASOF range bound for %s is NaN", r.Name)
		}
		if r.Lo.Float > r.Hi.Float || (r.Lo.Float == r.Hi.Float && (r.Lo.Exclusive || r.Hi.Exclusive)) {
			return sqlerr.New(sqlerr.InvalidParameterValue, "ASOF range lower bound %g is greater than upper bound %g", r.Lo.Float, r.Hi.Float)
		}
		return nil
	}
	if r.Lo.Int > r.Hi.Int || (r.Lo.Int == r.Hi.Int && (r.Lo.Exclusive || r.Hi.Exclusive)) {
		return sqlerr.New(sqlerr.InvalidParameterValue, "ASOF range lower bound %d is greater than upper bound %d", r.Lo.Int, r.Hi.Int)
	}
	return nil
}

// calendarBounds gives each Calendar bound the on column's kind (on a
// copy: the caller's Right is not changed); only dates and timestamps
// take one.
func calendarBounds(r *Right, k timeKind) error {
	for _, b := range []*Bound{&r.Lo, &r.Hi} {
		if b.Cal == nil || b.Unbounded {
			continue
		}
		if k.class != classDate32 && k.class != classDate64 && k.class != classTimestamp {
			return sqlerr.New(sqlerr.DatatypeMismatch, "ASOF range bound with months needs a date or timestamp on column (%s)", r.Name)
		}
		c := *b.Cal
		c.kind = k
		b.Cal = &c
	}
	return nil
}

// checkOrdRange checks the range of an on column of the comparison kernel:
// a decimal takes any 128-bit range; strings, binaries and booleans only
// the compatibility inequality forms' bounds (unbounded or 0), since
// their values have no distance.
func checkOrdRange(r Right, dt arrow.DataType, c ordClass) error {
	if c != ordDecimal {
		if r.Lo.Unbounded && r.Hi.Unbounded {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"ASOF on column of type %s (%s) needs one bounded side: its values have no distance to choose the nearest by", dt, r.Name)
		}
		for _, b := range []Bound{r.Lo, r.Hi} {
			if !b.Unbounded && (b.Int != 0 || b.Float != 0 || b.HasDec && b.Dec.Sign() != 0) {
				return sqlerr.New(sqlerr.FeatureNotSupported,
					"ASOF on column of type %s (%s) takes no range, only the inequality forms (bounds 0 or unbounded)", dt, r.Name)
			}
		}
	}
	if r.Lo.Unbounded || r.Hi.Unbounded {
		return nil
	}
	lo, hi := decBound(r.Lo), decBound(r.Hi)
	if c := cmpDecimal(lo, hi); !r.Empty && (c > 0 || c == 0 && (r.Lo.Exclusive || r.Hi.Exclusive)) {
		return sqlerr.New(sqlerr.InvalidParameterValue, "ASOF range lower bound %s is greater than upper bound %s",
			lo.BigInt(), hi.BigInt())
	}
	return nil
}
