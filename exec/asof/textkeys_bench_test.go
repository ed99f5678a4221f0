package asof

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkKeyLookup times encoding, hashing and looking up one 64K-row
// batch of keys in a key dictionary that holds them all (a left batch's
// keys, as leftKeys.load does): text keys of 16 characters and of 2 to 5
// (S0, S1, ...) against int64 keys, at the Flight benchmark's and S4's
// cardinalities. cpu-ns/row is the process's CPU time per row.
func BenchmarkKeyLookup(b *testing.B) {
	const rows = 64 * 1024
	for _, card := range []int{300, 5000} {
		for _, kind := range []string{"int64", "text16", "text3"} {
			b.Run(fmt.Sprintf("%s/card%d", kind, card), func(b *testing.B) {
				mem := memory.NewGoAllocator()
				rng := rand.New(rand.NewPCG(1, 2))
				var col arrow.Array
				var dt arrow.DataType
				switch kind {
				case "int64":
					bld := array.NewInt64Builder(mem)
					for i := 0; i < rows; i++ {
						bld.Append(int64(rng.IntN(card)) * 1000003)
					}
					col, dt = bld.NewArray(), arrow.PrimitiveTypes.Int64
				default:
					bld := array.NewStringBuilder(mem)
					for i := 0; i < rows; i++ {
						k := rng.IntN(card)
						if kind == "text16" {
							bld.Append(fmt.Sprintf("SYM%013d", k))
						} else {
							bld.Append(fmt.Sprintf("S%d", k))
						}
					}
					col, dt = bld.NewArray(), arrow.BinaryTypes.String
				}
				defer col.Release()
				sch := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dt}}, nil)
				enc, _, err := newKeyEncoding(sch, sch, []int{0}, []int{0}, nil, "l", "r")
				if err != nil {
					b.Fatal(err)
				}
				d := newKeyDict(enc.u64, &Options{})
				var kb keyBatch
				enc.encode([]arrow.Array{col}, rows, &kb)
				ids := make([]int32, rows)
				d.intern(&kb, ids)
				var lk leftKeys
				c0 := cpuTime()
				for b.Loop() {
					lk.load(&enc, d, []arrow.Array{col}, rows)
				}
				b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/rows, "cpu-ns/row")
			})
		}
	}
}
