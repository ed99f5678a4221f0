package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/eval"
	"github.com/asofsql/asofsql/sqlerr"
)

// regrFuncs are the two-argument statistics aggregates over (Y, X) pairs,
// all double precision but regr_count (bigint).
var regrFuncs = map[string]bool{
	"corr": true, "covar_pop": true, "covar_samp": true, "regr_avgx": true, "regr_avgy": true,
	"regr_count": true, "regr_intercept": true, "regr_r2": true, "regr_slope": true,
	"regr_sxx": true, "regr_syy": true, "regr_sxy": true,
}

// regrState is Postgres' float8_regr_accum state: N, Sx, Sxx, Sy, Syy,
// Sxy, updated with the Youngs-Cramer algorithm so that the sums of
// squares never cancel catastrophically.
type regrState struct{ n, sx, sxx, sy, syy, sxy float64 }

// regrAcc is corr, covar_*, and the regr_* family: Args are Y then X,
// both double precision; a row with either NULL is skipped.
type regrAcc struct {
	fn string
	st []regrState
	x  arrow.Array
}

var _ multiArg = (*regrAcc)(nil)

func (a *regrAcc) resize(n int)      { a.st = grow(a.st, n) }
func (a *regrAcc) keep(g int)        { a.st = keep1(a.st, g) }
func (a *regrAcc) groupBytes() int64 { return 48 }
func (a *regrAcc) setExtra(args []arrow.Array) {
	a.x = nil
	if len(args) > 0 {
		a.x = args[0]
	}
}

func (a *regrAcc) add(gids []int32, arg arrow.Array) error {
	ys, ok1 := arg.(*array.Float64)
	xs, ok2 := a.x.(*array.Float64)
	if !ok1 || !ok2 {
		return sqlerr.New(sqlerr.InternalError, "%s: arguments must be double precision", a.fn)
	}
	for i, g := range gids {
		if g < 0 || ys.IsNull(i) || xs.IsNull(i) {
			continue
		}
		if err := a.st[g].accum(ys.Value(i), xs.Value(i)); err != nil {
			return err
		}
	}
	return nil
}

func (s *regrState) accum(y, x float64) error {
	old := *s
	s.n++
	s.sx += x
	s.sy += y
	if old.n > 0 {
		tx, ty := x*s.n-s.sx, y*s.n-s.sy
		scale := 1 / (s.n * old.n)
		s.sxx += tx * tx * scale
		s.syy += ty * ty * scale
		s.sxy += tx * ty * scale
		inf := math.IsInf
		if inf(s.sx, 0) || inf(s.sxx, 0) || inf(s.sy, 0) || inf(s.syy, 0) || inf(s.sxy, 0) {
			if (inf(s.sx, 0) || inf(s.sxx, 0)) && !inf(old.sx, 0) && !inf(x, 0) ||
				(inf(s.sy, 0) || inf(s.syy, 0)) && !inf(old.sy, 0) && !inf(y, 0) ||
				inf(s.sxy, 0) && !inf(old.sx, 0) && !inf(x, 0) && !inf(old.sy, 0) && !inf(y, 0) {
				return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
			}
			if inf(s.sxx, 0) {
				s.sxx = math.NaN()
			}
			if inf(s.syy, 0) {
				s.syy = math.NaN()
			}
			if inf(s.sxy, 0) {
				s.sxy = math.NaN()
			}
		}
		return nil
	}
	// At the first input the sums of squares stay 0, unless it is infinite
	// or NaN: then they are NaN.
	if math.IsNaN(x) || math.IsInf(x, 0) {
		s.sxx, s.sxy = math.NaN(), math.NaN()
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		s.syy, s.sxy = math.NaN(), math.NaN()
	}
	return nil
}

// final is the aggregate's value for one group (ok false: NULL).
func (s regrState) final(fn string) (float64, bool) {
	if s.n < 1 {
		return 0, false
	}
	switch fn {
	case "regr_sxx":
		return s.sxx, true
	case "regr_syy":
		return s.syy, true
	case "regr_sxy":
		return s.sxy, true
	case "regr_avgx":
		return s.sx / s.n, true
	case "regr_avgy":
		return s.sy / s.n, true
	case "covar_pop":
		return s.sxy / s.n, true
	case "covar_samp":
		if s.n < 2 {
			return 0, false
		}
		return s.sxy / (s.n - 1), true
	case "corr":
		if s.sxx == 0 || s.syy == 0 {
			return 0, false
		}
		return s.sxy / math.Sqrt(s.sxx*s.syy), true
	case "regr_r2":
		if s.sxx == 0 {
			return 0, false
		}
		if s.syy == 0 {
			return 1, true
		}
		return s.sxy * s.sxy / (s.sxx * s.syy), true
	case "regr_slope":
		if s.sxx == 0 {
			return 0, false
		}
		return s.sxy / s.sxx, true
	case "regr_intercept":
		if s.sxx == 0 {
			return 0, false
		}
		return (s.sy - s.sx*s.sxy/s.sxx) / s.n, true
	}
	return 0, false
}

func (a *regrAcc) finish(mem memory.Allocator, n int) (arrow.Array, error) {
	if a.fn == "regr_count" {
		out := make([]int64, n)
		for g := range out {
			out[g] = int64(a.st[g].n)
		}
		return eval.MakeFixed(mem, arrow.PrimitiveTypes.Int64, out, nil), nil
	}
	out := make([]float64, n)
	valid := make([]bool, n)
	for g := range out {
		out[g], valid[g] = a.st[g].final(a.fn)
	}
	return eval.MakeFixed(mem, arrow.PrimitiveTypes.Float64, out, valid), nil
}
