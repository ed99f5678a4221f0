package main

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
)

// Summary is what two engines must agree on for one join: the number of
// output rows and, per right input, the number of left rows without a match
// and a checksum of the matched right values.
//
// The checksum is Σ over matched rows of (rp·2^53 + rt) · (t mod 1000003 + 1)
// in 128-bit integers, where t is the left row's t and rt, rp the matched
// right row's t and payload. It does not depend on row order (DuckDB does
// not promise one), and it ties each payload to its left row, so a match
// moved to another left row changes it. It is exact because the generator's
// payloads are multiples of 2^-53 in [0, 1) (math/rand/v2's Float64), so
// rp·2^53 is an integer that DuckDB and Go both compute without rounding;
// DuckDB evaluates the same formula in HUGEINT (see checksumSQL).
type Summary struct {
	Rows  int64
	Nulls []int64
	Sums  []Sum128
}

func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rows=%d", s.Rows)
	if s.Nulls == nil && len(s.Sums) == 1 {
		// An operator shape's summary (QuerySummarizer).
		fmt.Fprintf(&b, " checksum=%s", s.Sums[0])
		return b.String()
	}
	for i := range s.Nulls {
		fmt.Fprintf(&b, " r%d: nulls=%d checksum=%s", i+1, s.Nulls[i], s.Sums[i])
	}
	return b.String()
}

// Equal reports whether two summaries agree exactly.
func (s Summary) Equal(o Summary) bool {
	if s.Rows != o.Rows || len(s.Nulls) != len(o.Nulls) || len(s.Sums) != len(o.Sums) {
		return false
	}
	for i := range s.Nulls {
		if s.Nulls[i] != o.Nulls[i] || s.Sums[i] != o.Sums[i] {
			return false
		}
	}
	return true
}

// Sum128 is an unsigned 128-bit accumulator (wrapping; the sums of the
// benchmark shapes stay below 2^100).
type Sum128 struct{ Hi, Lo uint64 }

func (s *Sum128) addProduct(a, b uint64) {
	hi, lo := bits.Mul64(a, b)
	var c uint64
	s.Lo, c = bits.Add64(s.Lo, lo, 0)
	s.Hi, _ = bits.Add64(s.Hi, hi, c)
}

func (s Sum128) String() string {
	v := new(big.Int).SetUint64(s.Hi)
	v.Lsh(v, 64)
	v.Or(v, new(big.Int).SetUint64(s.Lo))
	return v.String()
}

// ParseSum128 reads a decimal checksum as DuckDB prints it.
func ParseSum128(s string) (Sum128, error) {
	v, ok := new(big.Int).SetString(strings.TrimSpace(s), 10)
	if !ok || v.Sign() < 0 || v.BitLen() > 128 {
		return Sum128{}, sqlerr.New(sqlerr.InvalidTextRepresentation, "checksum %q is not an unsigned 128-bit integer", s)
	}
	lo := new(big.Int).And(v, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(v, 64).Uint64()
	return Sum128{Hi: hi, Lo: lo}, nil
}

const (
	checksumMod = 1000003
	payloadUnit = 1 << 53
)

// checksumTerm adds one matched row. It rejects values the formula cannot
// carry exactly, so a wrong payload is an error, not a silent wrap.
func (s *Sum128) checksumTerm(lt, rt int64, rp float64) error {
	scaled := rp * payloadUnit
	if lt < 0 || rt < 0 || !(rp >= 0 && rp < 1) || scaled != math.Trunc(scaled) {
		return sqlerr.New(sqlerr.DataException, "checksum: matched row (t=%d, rt=%d, rp=%v) is outside the generator's domain", lt, rt, rp)
	}
	s.addProduct(uint64(scaled)+uint64(rt), uint64(lt%checksumMod)+1)
	return nil
}

// Summarizer accumulates a Summary over output batches laid out as asofsql
// returns them: the left columns (t first), then (rt, rp) per right input
// starting at column firstRight.
type Summarizer struct {
	sum        Summary
	firstRight int
}

// NewSummarizer prepares a summary for rights right inputs.
func NewSummarizer(rights, firstRight int) *Summarizer {
	return &Summarizer{sum: Summary{Nulls: make([]int64, rights), Sums: make([]Sum128, rights)}, firstRight: firstRight}
}

// Add folds one output batch into the summary.
func (z *Summarizer) Add(b arrow.RecordBatch) error {
	want := z.firstRight + 2*len(z.sum.Nulls)
	if int(b.NumCols()) != want {
		return sqlerr.New(sqlerr.InternalError, "output batch has %d columns, want %d", b.NumCols(), want)
	}
	lt, ok := b.Column(0).(*array.Int64)
	if !ok {
		return sqlerr.New(sqlerr.DatatypeMismatch, "output column 0 is %s, want int64", b.Column(0).DataType())
	}
	z.sum.Rows += b.NumRows()
	for r := range z.sum.Nulls {
		rt, ok1 := b.Column(z.firstRight + 2*r).(*array.Int64)
		rp, ok2 := b.Column(z.firstRight + 2*r + 1).(*array.Float64)
		if !ok1 || !ok2 {
			return sqlerr.New(sqlerr.DatatypeMismatch, "output columns of right input %d are %s, %s; want int64, float64",
				r+1, b.Column(z.firstRight+2*r).DataType(), b.Column(z.firstRight+2*r+1).DataType())
		}
		for i := 0; i < int(b.NumRows()); i++ {
			if rp.IsNull(i) {
				z.sum.Nulls[r]++
				continue
			}
			if rt.IsNull(i) {
				// DuckDB's NULL arithmetic drops such a row from its sum too.
				continue
			}
			if err := z.sum.Sums[r].checksumTerm(lt.Value(i), rt.Value(i), rp.Value(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Summary returns the accumulated summary.
func (z *Summarizer) Summary() Summary { return z.sum }
