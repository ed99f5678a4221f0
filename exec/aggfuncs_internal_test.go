package exec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestDecSumFastResult checks sum and avg over int8 against exact
// rounding (half away from zero) with big.Int, for sums in and beyond the
// int64 fast path, negative and exactly-half cases included.
func TestDecSumFastResult(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(5, 6))
	type group struct {
		sum decimal128.Num
		cnt int64
	}
	groups := []group{
		{decimal128.FromI64(1), 2}, {decimal128.FromI64(-1), 2}, {decimal128.FromI64(5), 3}, {decimal128.FromI64(-5), 3},
		{decimal128.FromI64(math.MaxInt64), 1}, {decimal128.FromI64(math.MinInt64), 1}, {decimal128.FromI64(math.MinInt64), 7},
		{decimal128.FromI64(math.MaxInt64).Add(decimal128.FromI64(1)), 3}, // beyond int64: the big.Int path
		{decimal128.FromI64(math.MinInt64).Sub(decimal128.FromI64(9)), 11},
		{decimal128.FromI64(0), 1},
		// 1/(2·10^16): the guard digit is exactly 5.
		{decimal128.FromI64(1), 2 * 10_000_000_000_000_000},
		{decimal128.FromI64(-1), 2 * 10_000_000_000_000_000},
	}
	for i := 0; i < 2000; i++ {
		groups = append(groups, group{decimal128.FromI64(rng.Int64() >> rng.IntN(64)), 1 + rng.Int64N(1<<rng.IntN(40))})
		if i%2 == 0 {
			groups[len(groups)-1].sum = groups[len(groups)-1].sum.Negate()
		}
	}
	for _, fn := range []string{"sum", "avg"} {
		out, err := AggResultType(fn, sqltypes.Int8Type)
		require.NoError(t, err)
		acc, err := newAccumulator(AggSpec{Func: fn, Type: out}, sqltypes.Int8Type)
		require.NoError(t, err)
		a := acc.(*decSumAcc)
		a.resize(len(groups))
		for g, gr := range groups {
			a.sum[g], a.cnt[g] = gr.sum, gr.cnt
		}
		res, err := a.finish(mem, len(groups))
		require.NoError(t, err)
		dec := res.(*array.Decimal128)
		scale := dec.DataType().(*arrow.Decimal128Type).Scale
		for g, gr := range groups {
			num := new(big.Int).Mul(gr.sum.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
			den := big.NewInt(1)
			if fn == "avg" {
				den = big.NewInt(gr.cnt)
			}
			q, r := new(big.Int).QuoRem(new(big.Int).Abs(num), den, new(big.Int))
			if r.Lsh(r, 1).Cmp(den) >= 0 {
				q.Add(q, big.NewInt(1))
			}
			if num.Sign() < 0 {
				q.Neg(q)
			}
			require.Equal(t, q.String(), dec.Value(g).BigInt().String(), "%s of group %d (sum %s, count %d)", fn, g, gr.sum.BigInt(), gr.cnt)
		}
		res.Release()
	}
}
