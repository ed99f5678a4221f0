package asof

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
)

// genSource generates a sorted time series on the fly: t grows by 1 or 2
// per row, keys are uniform over card values (int64, or 16-character
// strings when strKeys), and a float64 payload.
type genSource struct {
	schema  *arrow.Schema
	mem     memory.Allocator
	rng     *rand.Rand
	rows    int64
	done    int64
	batch   int
	t       int64
	card    int
	strKeys bool
	names   []string
}

func newGen(mem memory.Allocator, rows int64, card int, strKeys bool, seed uint64, payload string) *genSource {
	kt := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if strKeys {
		kt = arrow.BinaryTypes.String
	}
	g := &genSource{
		schema: arrow.NewSchema([]arrow.Field{{Name: "t", Type: i64}, {Name: "k", Type: kt}, {Name: payload, Type: f64}}, nil),
		mem:    mem, rng: rand.New(rand.NewPCG(seed, seed)), rows: rows, batch: 64 * 1024, card: card, strKeys: strKeys,
	}
	if strKeys {
		for i := 0; i < card; i++ {
			g.names = append(g.names, fmt.Sprintf("SYM%013d", i))
		}
	}
	return g
}

func (g *genSource) Schema() *arrow.Schema      { return g.schema }
func (g *genSource) Open(context.Context) error { return nil }
func (g *genSource) Close() error               { return nil }

func (g *genSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if g.done >= g.rows {
		return nil, io.EOF
	}
	n := int(min(int64(g.batch), g.rows-g.done))
	g.done += int64(n)
	tb := array.NewInt64Builder(g.mem)
	defer tb.Release()
	pb := array.NewFloat64Builder(g.mem)
	defer pb.Release()
	tb.Reserve(n)
	pb.Reserve(n)
	var keys arrow.Array
	if g.strKeys {
		kb := array.NewStringBuilder(g.mem)
		defer kb.Release()
		kb.Reserve(n)
		kb.ReserveData(n * 16)
		for i := 0; i < n; i++ {
			kb.Append(g.names[g.rng.IntN(g.card)])
		}
		keys = kb.NewArray()
	} else {
		kb := array.NewInt64Builder(g.mem)
		defer kb.Release()
		kb.Reserve(n)
		for i := 0; i < n; i++ {
			kb.UnsafeAppend(int64(g.rng.IntN(g.card)))
		}
		keys = kb.NewArray()
	}
	for i := 0; i < n; i++ {
		g.t += 1 + int64(g.rng.IntN(2))
		tb.UnsafeAppend(g.t)
		pb.UnsafeAppend(g.rng.Float64())
	}
	ts, ps := tb.NewArray(), pb.NewArray()
	rec := array.NewRecordBatch(g.schema, []arrow.Array{ts, keys, ps}, int64(n))
	ts.Release()
	keys.Release()
	ps.Release()
	return rec, nil
}

// cpuTime is this process's user+system CPU time in nanoseconds: on a
// shared machine it is a steadier figure than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// minorFaults is this process's count of minor page faults: each is a page
// touched for the first time (or again after the runtime returned it to the
// OS), which costs microseconds on this machine's kind of VM.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}

// materialize generates a whole input once so that benchmarks time only
// the join.
func materialize(b *testing.B, g *genSource) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	for {
		rec, err := g.Next(context.Background())
		if err == io.EOF {
			return out
		}
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, rec)
	}
}

func replay(schema *arrow.Schema, batches []arrow.RecordBatch) operator.Operator {
	for _, r := range batches {
		r.Retain()
	}
	return operator.NewBatches(schema, append([]arrow.RecordBatch(nil), batches...))
}

type shape struct {
	name        string
	left, right int64
	card        int
	strKeys     bool
	lo, hi      Bound
	rights      int
}

var shapes = []shape{
	{name: "S1_1Mx1M_backward", left: 1 << 20, right: 1 << 20, card: 1000, lo: Unbounded, hi: IntBound(0), rights: 1},
	{name: "S2_10Mx10M_backward", left: 10 << 20, right: 10 << 20, card: 1000, lo: Unbounded, hi: IntBound(0), rights: 1},
	{name: "S3_10Mx1M_range1000", left: 10 << 20, right: 1 << 20, card: 1000, lo: IntBound(-1000), hi: IntBound(0), rights: 1},
	{name: "S4_5Mx5M_stringkeys", left: 5 << 20, right: 5 << 20, card: 5000, strKeys: true, lo: Unbounded, hi: IntBound(0), rights: 1},
	{name: "S5_1Mx1M_nearest500", left: 1 << 20, right: 1 << 20, card: 1000, lo: IntBound(-500), hi: IntBound(500), rights: 1},
	{name: "S6_1Mx4x1M_backward", left: 1 << 20, right: 1 << 20, card: 1000, lo: Unbounded, hi: IntBound(0), rights: 4},
}

// BenchmarkJoin runs the shapes of docs/benchmarks.md (select with -bench,
// e.g. -bench 'Join/S1'). The figures that matter are ns/leftrow (wall) and
// cpu-ns/leftrow (CPU time of the whole process, summed over cores).
// ASOF_BENCH_SERIAL=1 runs every right input on the calling goroutine: S6's
// serial CPU time against its concurrent one shows what concurrency costs.
// ASOF_BENCH_WORKERS=N (N > 1) runs the join in morsels at N workers.
func BenchmarkJoin(b *testing.B) {
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			left := materialize(b, newGen(mem, s.left, s.card, s.strKeys, 1, "lp"))
			var rights [][]arrow.RecordBatch
			for i := 0; i < s.rights; i++ {
				if s.right != s.left {
					// A sparser right input over the same time span.
					rights = append(rights, materializeSpan(b, mem, s))
					continue
				}
				rights = append(rights, materialize(b, newGen(mem, s.right, s.card, s.strKeys, uint64(2+i), "rp")))
			}
			lschema := left[0].Schema()
			rschema := rights[0][0].Schema()
			var matched int64
			join := func() {
				var specs []Right
				for r := range rights {
					specs = append(specs, Right{Name: "r" + strconv.Itoa(r), Input: replay(rschema, rights[r]), LeftOn: 0, On: 0,
						LeftKeys: []int{1}, Keys: []int{1}, Lo: s.lo, Hi: s.hi, Kind: Left, Payload: []int{0, 2}})
				}
				opts := Options{Allocator: mem, Serial: os.Getenv("ASOF_BENCH_SERIAL") == "1"}
				var j operator.Operator
				var err error
				if w, _ := strconv.Atoi(os.Getenv("ASOF_BENCH_WORKERS")); w > 1 {
					j, err = NewMorsel(replay(lschema, left), specs, opts, w)
				} else {
					j, err = New(replay(lschema, left), specs, opts)
				}
				if err != nil {
					b.Fatal(err)
				}
				matched = 0
				err = operator.Drain(context.Background(), j, func(rec arrow.RecordBatch) error {
					matched += rec.NumRows() - int64(rec.Column(int(rec.NumCols())-1).NullN())
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			// One join before the clock starts: generating the inputs
			// ran the garbage collector, which empties the process-wide
			// buffer cache (operator.Pool), so the first join takes every
			// output buffer fresh from the heap (~600 page faults per
			// join averaged over 10 in S6). Steady state is what is
			// measured; the cold join's cost is a one-off per collection.
			join()
			b.ResetTimer()
			cpu0, flt0 := cpuTime(), minorFaults()
			for i := 0; i < b.N; i++ {
				join()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*s.left), "ns/leftrow")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(int64(b.N)*s.left), "cpu-ns/leftrow")
			b.ReportMetric(float64(matched)/float64(s.left), "matched/row")
			b.ReportMetric(float64(minorFaults()-flt0)/float64(b.N), "faults/op")
			for _, l := range [][]arrow.RecordBatch{left} {
				for _, r := range l {
					r.Release()
				}
			}
			for _, rs := range rights {
				for _, r := range rs {
					r.Release()
				}
			}
		})
	}
}

// materializeSpan builds a right input with s.right rows spread over the
// same time span as the left input (steps ~ left/right times larger).
func materializeSpan(b *testing.B, mem memory.Allocator, s shape) []arrow.RecordBatch {
	g := newGen(mem, s.right, s.card, s.strKeys, 2, "rp")
	step := s.left / s.right
	var out []arrow.RecordBatch
	for {
		rec, err := g.Next(context.Background())
		if err == io.EOF {
			return out
		}
		// Rescale t: multiply by step.
		ts := rec.Column(0).(*array.Int64).Int64Values()
		for i := range ts {
			ts[i] *= step
		}
		out = append(out, rec)
	}
}

// BenchmarkStream100M joins 100M left × 100M right rows generated on the fly
// and reports the peak Go heap; it runs only when ASOF_BENCH_STREAM=1 (it
// takes about a minute). Peak heap must stay far below the inputs' size.
// ASOF_BENCH_WORKERS=N (N > 1) runs the join in morsels at N workers.
func BenchmarkStream100M(b *testing.B) {
	if os.Getenv("ASOF_BENCH_STREAM") != "1" {
		b.Skip("set ASOF_BENCH_STREAM=1")
	}
	rows := int64(100_000_000)
	for i := 0; i < b.N; i++ {
		mem := memory.NewGoAllocator()
		left := newGen(mem, rows, 1000, false, 1, "lp")
		rights := []Right{{Name: "r", Input: newGen(mem, rows, 1000, false, 2, "rp"),
			LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: Unbounded, Hi: IntBound(0), Kind: Left, Payload: []int{0, 2}}}
		var j operator.Operator
		var err error
		if w, _ := strconv.Atoi(os.Getenv("ASOF_BENCH_WORKERS")); w > 1 {
			j, err = NewMorsel(left, rights, Options{Allocator: mem}, w)
		} else {
			j, err = New(left, rights, Options{Allocator: mem})
		}
		if err != nil {
			b.Fatal(err)
		}
		var peak uint64
		var ms runtime.MemStats
		var n int64
		err = operator.Drain(context.Background(), j, func(rec arrow.RecordBatch) error {
			n += rec.NumRows()
			if n%(1<<23) < rec.NumRows() {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peakheapMiB")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/leftrow")
	}
}
