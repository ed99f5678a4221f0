package main

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/asof"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// refResult is the naive reference's answer plus how often it had to
// break an equidistant tie, so a test can prove it exercised the rule.
type refResult struct {
	Summary
	ties int
}

type column struct {
	t    []int64
	keys []string
	p    []float64
}

func columns(t *testing.T, in Input) column {
	var c column
	for _, b := range in.Batches {
		ts := b.Column(0).(*array.Int64)
		ps := b.Column(2).(*array.Float64)
		for i := 0; i < int(b.NumRows()); i++ {
			c.t = append(c.t, ts.Value(i))
			c.p = append(c.p, ps.Value(i))
			switch k := b.Column(1).(type) {
			case *array.Int64:
				c.keys = append(c.keys, strconv.FormatInt(k.Value(i), 10))
			case *array.String:
				c.keys = append(c.keys, k.Value(i))
			default:
				t.Fatalf("key column of %s is %s", in.Name, k.DataType())
			}
		}
	}
	return c
}

// reference computes the shape's answer straight from the spec (§2): for
// each left row and right input, among right rows with an equal key and
// lo <= Δ <= hi, the smallest |Δ| wins, Δ < 0 on an equidistant tie
// (PREFER EARLIER). No input repeats a t, so no same-t rule is needed; the
// test asserts that instead of assuming it.
func reference(t *testing.T, d *Dataset) refResult {
	s := d.Shape
	l := columns(t, d.Left)
	res := refResult{Summary: Summary{Rows: int64(len(l.t)), Nulls: make([]int64, s.Rights), Sums: make([]Sum128, s.Rights)}}
	for ri, in := range d.Rights {
		r := columns(t, in)
		byKey := map[string][]int{}
		for i, k := range r.keys {
			if i > 0 {
				require.Greater(t, r.t[i], r.t[i-1], "%s repeats or lowers t at row %d", in.Name, i)
			}
			byKey[k] = append(byKey[k], i)
		}
		for li, lt := range l.t {
			best, bestDist := -1, int64(0)
			for _, j := range byKey[l.keys[li]] {
				delta := r.t[j] - lt
				if (!s.Lo.Unbounded && delta < s.Lo.Int) || (!s.Hi.Unbounded && delta > s.Hi.Int) {
					continue
				}
				dist := max(delta, -delta)
				switch {
				case best < 0 || dist < bestDist:
					best, bestDist = j, dist
				case dist == bestDist:
					res.ties++
					if delta < 0 {
						best = j
					}
				}
			}
			if best < 0 {
				res.Nulls[ri]++
				continue
			}
			require.NoError(t, res.Sums[ri].checksumTerm(lt, r.t[best], r.p[best]))
		}
	}
	return res
}

// smallShapes cover every kind of range and key the real shapes use, at a
// size where the reference is quick and keys are dense enough (7 of them)
// that the bounded ranges both match and miss.
func smallShapes() []Shape {
	return []Shape{
		{Name: "backward", Left: 3000, Right: 2500, Card: 7, Lo: asof.Unbounded, Hi: asof.IntBound(0), Rights: 1},
		{Name: "range", Left: 3000, Right: 300, Card: 7, Lo: asof.IntBound(-60), Hi: asof.IntBound(0), Rights: 1},
		{Name: "strings", Left: 2000, Right: 2000, Card: 7, StrKeys: true, Lo: asof.Unbounded, Hi: asof.IntBound(0), Rights: 1},
		{Name: "nearest", Left: 3000, Right: 3000, Card: 7, Lo: asof.IntBound(-6), Hi: asof.IntBound(6), Rights: 1},
		{Name: "nearest-open", Left: 1000, Right: 1000, Card: 7, Lo: asof.Unbounded, Hi: asof.Unbounded, Rights: 1},
		{Name: "multi", Left: 2000, Right: 2000, Card: 7, Lo: asof.Unbounded, Hi: asof.IntBound(0), Rights: 4},
		{Name: "spans-batches", Left: batchRows + 1000, Right: batchRows / 2, Card: 300, Lo: asof.IntBound(-400), Hi: asof.IntBound(0), Rights: 1},
	}
}

func TestEnginesAgreeWithReference(t *testing.T) {
	ctx := context.Background()
	db, err := OpenDuckDB(ctx)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range smallShapes() {
		t.Run(s.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			d := Generate(s, mem)
			defer d.Release()
			want := reference(t, d)
			if !s.Lo.Unbounded || !s.Hi.Unbounded {
				// Only a fully open range matches every left row here.
				require.Greater(t, want.Nulls[0], int64(0), "shape must leave some left rows unmatched")
			}
			require.Less(t, want.Nulls[0], want.Rows, "shape must match some left rows")
			if (s.Lo.Unbounded || s.Lo.Int < 0) && (s.Hi.Unbounded || s.Hi.Int > 0) {
				require.Greater(t, want.ties, 0, "nearest shape must exercise the tie rule")
			}

			probeMem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer probeMem.AssertSize(t, 0)
			engines := []Engine{&OperatorEngine{}, &OperatorEngine{Serial: true},
				&DuckDBEngine{DB: db, Threads: 1}, &DuckDBEngine{DB: db, Threads: 2}}
			defer finish(t, engines, nil)
			got, err := RunShape(ctx, s, d, engines, 2, NewProbe(probeMem), io.Discard)
			require.NoError(t, err)
			require.Equal(t, want.Summary.String(), got.Summary.String())
			require.Len(t, got.Engines, len(engines))
			for _, e := range got.Engines {
				require.Len(t, e.Times, 2, e.Engine)
				require.Len(t, e.CPU, 2, e.Engine)
				require.GreaterOrEqual(t, e.PeakRSS, int64(-1), e.Engine)
			}
			require.Greater(t, got.Engines[0].PeakArrow, int64(0), "asofsql allocates its output through the probe")
			require.Equal(t, int64(-1), got.Engines[2].PeakArrow, "DuckDB allocates no Arrow memory")
		})
	}
}

// wrongEngine returns the asofsql answer with one matched row dropped from
// the checksum, as a wrong join would.
type wrongEngine struct{ OperatorEngine }

func (w *wrongEngine) Name() string { return "wrong" }

func (w *wrongEngine) Run(ctx context.Context, p *Probe) (Measure, Summary, error) {
	m, s, err := w.OperatorEngine.Run(ctx, p)
	s.Sums = append([]Sum128(nil), s.Sums...)
	s.Sums[0].Lo++
	return m, s, err
}

// finish ends engines as runShapes does, then closes adb (if any).
func finish(t *testing.T, engines []Engine, adb *AsofDB) {
	for i := len(engines) - 1; i >= 0; i-- {
		require.NoError(t, engines[i].Finish())
	}
	if adb != nil {
		require.NoError(t, adb.Close())
	}
}

func TestRunShapeFailsOnDisagreement(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := smallShapes()[0]
	d := Generate(s, mem)
	defer d.Release()
	_, err := RunShape(context.Background(), s, d, []Engine{&OperatorEngine{}, &wrongEngine{}}, 1, NewProbe(mem), io.Discard)
	require.Error(t, err)
	require.Equal(t, sqlerr.DataException, sqlerr.Code(err))
	require.Contains(t, err.Error(), "asofsql and wrong disagree")
	se, ok := sqlerr.As(err)
	require.True(t, ok)
	require.Contains(t, se.Detail, "checksum=")
}

func TestRunShapeRejectsBadArguments(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := smallShapes()[0]
	d := Generate(s, mem)
	defer d.Release()
	_, err := RunShape(context.Background(), s, d, []Engine{&OperatorEngine{}}, 0, NewProbe(mem), io.Discard)
	require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err))
	_, err = RunShape(context.Background(), s, d, nil, 1, NewProbe(mem), io.Discard)
	require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err))
	// The operator engine does not run operator shapes: no engine left.
	q := QueryShapes[0]
	_, err = RunShape(context.Background(), q, d, []Engine{&OperatorEngine{}}, 1, NewProbe(mem), io.Discard)
	require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err))
	// Data generated for another shape is refused.
	_, err = RunShape(context.Background(), smallShapes()[1], d, []Engine{&OperatorEngine{}}, 1, NewProbe(mem), io.Discard)
	require.Equal(t, sqlerr.InternalError, sqlerr.Code(err))
}

// TestRunShapeReportsEngineErrors checks that an engine's refusal reaches
// the caller with its SQLSTATE: the operator rejects lo > hi (22023) and
// the DuckDB engine a range it has no spelling for (0A000).
func TestRunShapeReportsEngineErrors(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := Shape{Name: "bad", Left: 100, Right: 100, Card: 3, Lo: asof.IntBound(5), Hi: asof.IntBound(-5), Rights: 1}
	d := Generate(s, mem)
	defer d.Release()
	_, err := RunShape(ctx, s, d, []Engine{&OperatorEngine{}}, 1, NewProbe(mem), io.Discard)
	require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err))
	require.Contains(t, err.Error(), "bad: asofsql run 0")

	db, err := OpenDuckDB(ctx)
	require.NoError(t, err)
	defer db.Close()
	s.Lo, s.Hi = asof.IntBound(1), asof.IntBound(5)
	d2 := Generate(s, mem)
	defer d2.Release()
	_, err = RunShape(ctx, s, d2, []Engine{&OperatorEngine{}, &DuckDBEngine{DB: db, Threads: 1}}, 1, NewProbe(mem), io.Discard)
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
	require.Contains(t, err.Error(), "prepare DuckDB 1T")
}

func TestGenerate(t *testing.T) {
	for _, s := range []Shape{
		{Name: "ints", Left: 2*batchRows + 5, Right: 1000, Card: 50, Rights: 2},
		{Name: "strings", Left: 100, Right: 100, Card: 5, StrKeys: true, Rights: 1},
	} {
		t.Run(s.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			a, b := Generate(s, mem), Generate(s, mem)
			defer a.Release()
			defer b.Release()
			require.Len(t, a.Rights, s.Rights)
			for i, in := range append([]Input{a.Left}, a.Rights...) {
				other := append([]Input{b.Left}, b.Rights...)[i]
				require.Equal(t, len(in.Batches), len(other.Batches))
				var rows int64
				prev := int64(-1)
				for bi, batch := range in.Batches {
					require.True(t, array.RecordEqual(batch, other.Batches[bi]), "generation is deterministic")
					require.LessOrEqual(t, batch.NumRows(), int64(batchRows))
					rows += batch.NumRows()
					ts := batch.Column(0).(*array.Int64).Int64Values()
					for _, v := range ts {
						require.Greater(t, v, prev, "t strictly increases")
						prev = v
					}
					for _, p := range batch.Column(2).(*array.Float64).Float64Values() {
						var z Sum128
						require.NoError(t, z.checksumTerm(1, 1, p), "payload %v is in the checksum's domain", p)
					}
					switch k := batch.Column(1).(type) {
					case *array.Int64:
						for _, v := range k.Int64Values() {
							require.True(t, v >= 0 && v < int64(s.Card))
						}
					case *array.String:
						for i := 0; i < k.Len(); i++ {
							require.Len(t, k.Value(i), 16)
						}
					}
				}
				require.Equal(t, in.Rows, rows)
			}
			// Right inputs differ from the left (own seeds) and are spread
			// over the left's time span.
			ls, rs := a.Left.Batches[0].NewSlice(0, 10), a.Rights[0].Batches[0].NewSlice(0, 10)
			defer ls.Release()
			defer rs.Release()
			require.False(t, array.RecordEqual(ls, rs))
			if s.Right < s.Left {
				lastL := lastT(a.Left)
				lastR := lastT(a.Rights[0])
				require.InDelta(t, float64(lastL), float64(lastR), float64(lastL)/5)
			}
		})
	}
}

func lastT(in Input) int64 {
	b := in.Batches[len(in.Batches)-1]
	return b.Column(0).(*array.Int64).Value(int(b.NumRows()) - 1)
}

// TestGenerateMatchesOperatorBenchmark pins values that exec/asof's
// genSource produces for the same seeds (read from it once): the left input
// (seed 1, 1,000 int keys) and the second right input (seed 3, 5,000
// string keys). A failure means the two benchmarks no longer share data.
func TestGenerateMatchesOperatorBenchmark(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := Generate(Shape{Left: 1049, Right: 100, Card: 1000, Rights: 1}, mem)
	defer d.Release()
	b := d.Left.Batches[0]
	require.Equal(t, []int64{2, 3, 4, 5, 6}, b.Column(0).(*array.Int64).Int64Values()[:5])
	require.Equal(t, []int64{997, 102, 863, 912, 285}, b.Column(1).(*array.Int64).Int64Values()[:5])
	require.Equal(t, []float64{0.07082891614031495, 0.7251131493378108}, b.Column(2).(*array.Float64).Float64Values()[:2])

	s := Generate(Shape{Left: 100, Right: 100, Card: 5000, StrKeys: true, Rights: 2}, mem)
	defer s.Release()
	b = s.Rights[1].Batches[0]
	require.Equal(t, []int64{2, 3, 5, 7, 8}, b.Column(0).(*array.Int64).Int64Values()[:5])
	require.Equal(t, "SYM0000000001409", b.Column(1).(*array.String).Value(0))
	require.Equal(t, []float64{0.9959746766152721, 0.7300415566238508}, b.Column(2).(*array.Float64).Float64Values()[:2])
}

func TestSummarizer(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "t", Type: arrow.PrimitiveTypes.Int64},
		{Name: "rt", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "rp", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	batch := func(lt []int64, rt []int64, rp []float64, valid []bool) arrow.RecordBatch {
		bld := array.NewRecordBuilder(mem, schema)
		defer bld.Release()
		bld.Field(0).(*array.Int64Builder).AppendValues(lt, nil)
		bld.Field(1).(*array.Int64Builder).AppendValues(rt, valid)
		bld.Field(2).(*array.Float64Builder).AppendValues(rp, valid)
		return bld.NewRecordBatch()
	}
	sum := func(bs ...arrow.RecordBatch) (Summary, error) {
		z := NewSummarizer(1, 1)
		for _, b := range bs {
			defer b.Release()
			if err := z.Add(b); err != nil {
				return Summary{}, err
			}
		}
		return z.Summary(), nil
	}
	half := 0.5 // 2^52 after scaling
	base, err := sum(batch([]int64{10, 20, 30}, []int64{9, 0, 29}, []float64{half, 0, 0.25}, []bool{true, false, true}))
	require.NoError(t, err)
	// (2^52 + 9)·11 + (2^51 + 29)·31
	require.Equal(t, "rows=3 r1: nulls=1 checksum=119345390125319142", base.String())

	// The same rows in another order and other batches: same summary.
	split, err := sum(batch([]int64{30}, []int64{29}, []float64{0.25}, nil), batch([]int64{20, 10}, []int64{0, 9}, []float64{0, half}, []bool{false, true}))
	require.NoError(t, err)
	require.True(t, base.Equal(split))

	// The same payloads attached to other left rows: different checksum.
	swapped, err := sum(batch([]int64{30, 20, 10}, []int64{9, 0, 29}, []float64{half, 0, 0.25}, []bool{true, false, true}))
	require.NoError(t, err)
	require.False(t, base.Equal(swapped))

	// A payload the checksum cannot carry exactly is an error.
	_, err = sum(batch([]int64{1}, []int64{1}, []float64{1.5}, nil))
	require.Equal(t, sqlerr.DataException, sqlerr.Code(err))

	// A batch of the wrong layout is an error, not a panic.
	z := NewSummarizer(2, 1)
	b := batch([]int64{1}, []int64{1}, []float64{0}, nil)
	defer b.Release()
	require.Equal(t, sqlerr.InternalError, sqlerr.Code(z.Add(b)))
}

func TestSum128(t *testing.T) {
	var s Sum128
	s.addProduct(1<<63, 4) // 2^65
	s.addProduct(3, 5)
	require.Equal(t, "36893488147419103247", s.String())
	back, err := ParseSum128(s.String())
	require.NoError(t, err)
	require.Equal(t, s, back)
	for _, bad := range []string{"", "x", "-1", "340282366920938463463374607431768211456"} {
		_, err := ParseSum128(bad)
		require.Equal(t, sqlerr.InvalidTextRepresentation, sqlerr.Code(err), bad)
	}
	max, err := ParseSum128("340282366920938463463374607431768211455")
	require.NoError(t, err)
	require.Equal(t, Sum128{Hi: ^uint64(0), Lo: ^uint64(0)}, max)
}

func TestJoinSQL(t *testing.T) {
	tests := []struct {
		name     string
		shape    Shape
		contains []string
		code     string
	}{
		{name: "backward", shape: Shapes[0], contains: []string{
			"SELECT l.t, l.k, l.lp, r1.t AS rt1, r1.rp AS rp1",
			"ASOF LEFT JOIN r1 ON l.k = r1.k AND l.t >= r1.t"}},
		{name: "range", shape: Shapes[2], contains: []string{
			"CASE WHEN l.t - r1.t <= 1000 THEN r1.rp END AS rp1"}},
		{name: "nearest", shape: Shapes[4], contains: []string{
			"ASOF LEFT JOIN r1 AS b1 ON l.k = b1.k AND l.t >= b1.t",
			"ASOF LEFT JOIN r1 AS f1 ON l.k = f1.k AND l.t <= f1.t",
			"l.t - b1.t <= f1.t - l.t"}},
		{name: "four rights", shape: Shapes[5], contains: []string{"r4.rp AS rp4", "ASOF LEFT JOIN r4 ON l.k = r4.k"}},
		{name: "forward only", shape: Shape{Name: "fwd", Rights: 1, Lo: asof.IntBound(0), Hi: asof.IntBound(5)}, code: sqlerr.FeatureNotSupported},
		{name: "strictly backward", shape: Shape{Name: "lt", Rights: 1, Lo: asof.IntBound(-5), Hi: asof.IntBound(-1)}, code: sqlerr.FeatureNotSupported},
		{name: "no right", shape: Shape{Name: "none", Hi: asof.IntBound(0)}, code: sqlerr.InvalidParameterValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := JoinSQL(tc.shape)
			if tc.code != "" {
				require.Equal(t, tc.code, sqlerr.Code(err))
				require.Contains(t, err.Error(), tc.shape.Name)
				return
			}
			require.NoError(t, err)
			for _, c := range tc.contains {
				require.Contains(t, q, c)
			}
		})
	}
}

func TestSelectShapes(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		code string
	}{
		{in: "all", want: []string{"S1", "S2", "S3", "S4", "S5", "S6", "F1", "F2", "O1", "O2", "T1", "G1", "G2", "G3", "P1", "W1"}},
		{in: "", want: []string{"S1", "S2", "S3", "S4", "S5", "S6", "F1", "F2", "O1", "O2", "T1", "G1", "G2", "G3", "P1", "W1"}},
		{in: "s1, S3,S1", want: []string{"S1", "S3"}},
		{in: "asof", want: []string{"S1", "S2", "S3", "S4", "S5", "S6"}},
		{in: "g2,ops", want: []string{"G2", "F1", "F2", "O1", "O2", "T1", "G1", "G3", "P1", "W1"}},
		{in: "S7", code: sqlerr.InvalidParameterValue},
		{in: "S1,", code: sqlerr.InvalidParameterValue},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := SelectShapes(tc.in)
			if tc.code != "" {
				require.Equal(t, tc.code, sqlerr.Code(err))
				return
			}
			require.NoError(t, err)
			var names []string
			for _, s := range got {
				names = append(names, s.Name)
			}
			require.Equal(t, tc.want, names)
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code string
		msg  string
	}{
		{name: "defaults", args: nil},
		{name: "quick", args: []string{"-shapes", "S1,S3", "-runs", "3", "-scale", "0.01", "-threads", "2"}},
		{name: "zero runs", args: []string{"-runs", "0"}, code: sqlerr.InvalidParameterValue, msg: "-runs"},
		{name: "negative scale", args: []string{"-scale", "-1"}, code: sqlerr.InvalidParameterValue, msg: "-scale"},
		{name: "bad threads", args: []string{"-threads", "1,x"}, code: sqlerr.InvalidParameterValue, msg: `"x"`},
		{name: "unknown flag", args: []string{"-nope"}, code: sqlerr.InvalidParameterValue, msg: "nope"},
		{name: "stray argument", args: []string{"S1"}, code: sqlerr.InvalidParameterValue, msg: `"S1"`},
		{name: "unknown shape", args: []string{"-shapes", "S9"}, code: sqlerr.InvalidParameterValue, msg: "S9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(tc.args, io.Discard)
			if tc.code != "" {
				require.Equal(t, tc.code, sqlerr.Code(err))
				require.Contains(t, err.Error(), tc.msg)
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, c.shapes)
		})
	}
	c, err := parseFlags([]string{"-shapes", "S1,S3", "-runs", "3", "-scale", "0.01", "-threads", "2, 1"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []int{2, 1}, c.threads)
	require.Equal(t, 3, c.runs)
	require.Len(t, c.shapes, 2)
}

func TestScaled(t *testing.T) {
	s := Shapes[2].Scaled(0.01)
	require.Equal(t, int64(104858), s.Left)
	require.Equal(t, int64(10486), s.Right)
	require.Equal(t, 1000, s.Card)
	require.Equal(t, int64(1), Shapes[0].Scaled(1e-9).Left)
	require.Equal(t, Shapes[1], Shapes[1].Scaled(1))
}

func TestMedianAndTable(t *testing.T) {
	require.Equal(t, time.Duration(0), median(nil))
	require.Equal(t, 3*time.Millisecond, median([]time.Duration{5 * time.Millisecond, time.Millisecond, 3 * time.Millisecond}))
	require.Equal(t, 4*time.Millisecond, median([]time.Duration{5 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 7 * time.Millisecond}))

	var buf strings.Builder
	WriteTable(&buf, []ShapeResult{{
		Shape: Shapes[0].Scaled(0.5),
		Engines: []EngineResult{
			{Engine: "asofsql", Times: []time.Duration{100 * time.Millisecond}, CPU: []time.Duration{50 * time.Millisecond}, PeakRSS: 3 << 20, PeakArrow: 1 << 20},
			{Engine: "DuckDB 1T", Times: []time.Duration{400 * time.Millisecond}, CPU: []time.Duration{800 * time.Millisecond}, PeakRSS: -1, PeakArrow: -1},
		},
	}})
	WriteTable(&buf, []ShapeResult{{
		Shape: QueryShapes[0],
		Engines: []EngineResult{
			{Engine: "asofsql SQL", Times: []time.Duration{200 * time.Millisecond}, CPU: []time.Duration{100 * time.Millisecond}, PeakRSS: -1, PeakArrow: -1},
			{Engine: "DuckDB 2T", Times: []time.Duration{100 * time.Millisecond}, CPU: []time.Duration{200 * time.Millisecond}, PeakRSS: -1, PeakArrow: -1},
		},
	}})
	require.Equal(t, `| shape | rows | engine | median ms | ns/row | CPU ns/row | peak RSS Δ MiB | Arrow peak MiB | asofsql/engine | asofsql/engine CPU |
| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| S1 | 524,288 × 524,288 | asofsql | 100.0 | 190.7 | 95.4 | 3.0 | 1.0 | — | — |
| S1 | 524,288 × 524,288 | DuckDB 1T | 400.0 | 762.9 | 1525.9 | n/a | n/a | 0.25 | 0.06 |
| shape | rows | engine | median ms | ns/row | CPU ns/row | peak RSS Δ MiB | Arrow peak MiB | asofsql/engine | asofsql/engine CPU |
| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| F1 | 10M | asofsql SQL | 200.0 | 19.1 | 9.5 | n/a | n/a | — | — |
| F1 | 10M | DuckDB 2T | 100.0 | 9.5 | 19.1 | n/a | n/a | 2.00 | 0.50 |
`, buf.String())
	require.Equal(t, "10M", rowsString(10<<20))
	require.Equal(t, "1,000", rowsString(1000))
	require.Equal(t, "7", rowsString(7))
}

func TestTrackingAllocator(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := NewTrackingAllocator(mem)
	b1 := a.Allocate(1000)
	b2 := a.Allocate(500)
	require.Equal(t, int64(1500), a.Live())
	b1 = a.Reallocate(3000, b1)
	require.Equal(t, int64(3500), a.Peak())
	a.Free(b2)
	a.ResetPeak()
	require.Equal(t, int64(3000), a.Peak())
	a.Free(b1)
	require.Equal(t, int64(0), a.Live())
	require.Equal(t, int64(3000), a.Peak())
}

func TestProbeMeasuresRSS(t *testing.T) {
	p := NewProbe(memory.NewGoAllocator())
	p.MeasureRSS()
	p.Begin()
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	m := p.End()
	if m.PeakRSS == -1 {
		t.Skip("this kernel does not allow resetting VmHWM")
	}
	require.GreaterOrEqual(t, m.PeakRSS, int64(60<<20))
	require.Equal(t, int64(-1), m.PeakArrow, "nothing asked for the probe's allocator")
	// Without MeasureRSS the next run does not report RSS.
	p.Begin()
	m = p.End()
	require.Equal(t, int64(-1), m.PeakRSS)
	buf[0] = 2
}
