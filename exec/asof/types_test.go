package asof

import (
	"context"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/exectest"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// TestOnTypes runs the same backward join (range [-10, 0], one string key)
// over every supported on-column type, with negative values across zero.
func TestOnTypes(t *testing.T) {
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64,
		&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Millisecond},
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, &arrow.TimestampType{Unit: arrow.Nanosecond},
		&arrow.Decimal128Type{Precision: 10, Scale: 0}, &arrow.Decimal128Type{Precision: 30, Scale: 2},
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
	}
	for _, dt := range types {
		lfs := []arrow.Field{f("t", dt), f("k", str), f("lv", i64)}
		rfs := []arrow.Field{f("t", dt), f("k", str), f("rv", i64)}
		left := rowsOf(lfs, []any{-20, "a", 1}, []any{-5, "a", 2}, []any{0, "a", 3}, []any{12, "a", 4}, []any{100, "a", 5})
		right := rowsOf(rfs, []any{-30, "a", 10}, []any{-12, "a", 11}, []any{-1, "a", 12}, []any{2, "a", 13}, []any{95, "b", 14})
		lo, hi := IntBound(-10), IntBound(0)
		if dt.ID() == arrow.FLOAT32 || dt.ID() == arrow.FLOAT64 {
			lo, hi = FloatBound(-10), FloatBound(0)
		}
		sp := Right{Name: "r", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: lo, Hi: hi, Kind: Left, Payload: []int{2}}
		runJoinCase(t, joinCase{name: dt.String(), left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{sp},
			want: []string{
				rowStr(t, dt, -20, "a | 1 | 10"), rowStr(t, dt, -5, "a | 2 | 11"), rowStr(t, dt, 0, "a | 3 | 12"),
				rowStr(t, dt, 12, "a | 4 | 13"), rowStr(t, dt, 100, "a | 5 | NULL")}})
	}
}

// rowStr renders an on value of type dt the way exectest.Format does.
func rowStr(t *testing.T, dt arrow.DataType, v int64, rest string) string {
	mem := memory.NewGoAllocator()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	appendAny(b, v)
	a := b.NewArray()
	defer a.Release()
	return a.ValueStr(0) + " | " + rest
}

func TestUnsignedExtremes(t *testing.T) {
	u := arrow.PrimitiveTypes.Uint64
	lfs := []arrow.Field{f("t", u), f("lv", i64)}
	rfs := []arrow.Field{f("t", u), f("rv", i64)}
	max := uint64(math.MaxUint64)
	left := rowsOf(lfs, []any{uint64(0), 1}, []any{uint64(1 << 63), 2}, []any{max, 3})
	right := rowsOf(rfs, []any{uint64(0), 10}, []any{uint64(1<<63) - 1, 11}, []any{max - 1, 12}, []any{max, 13})
	sp := Right{Name: "r", LeftOn: 0, On: 0, Lo: IntBound(-1), Hi: IntBound(math.MaxInt64), Kind: Left, Payload: []int{0, 1}}
	runJoinCase(t, joinCase{name: "uint64", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{sp},
		want: []string{"0 | 1 | 0 | 10", "9223372036854775808 | 2 | 9223372036854775807 | 11", "18446744073709551615 | 3 | 18446744073709551615 | 13"}})
}

func TestFloatSpecials(t *testing.T) {
	lfs := []arrow.Field{f("t", f64), f("lv", i64)}
	rfs := []arrow.Field{f("t", f64), f("rv", i64)}
	nan := math.NaN()
	// NaN t is NULL; -0 equals 0; infinities order at the ends.
	left := rowsOf(lfs, []any{math.Inf(-1), 1}, []any{math.Copysign(0, -1), 2}, []any{nan, 3}, []any{0.25, 4}, []any{math.Inf(1), 5})
	right := rowsOf(rfs, []any{math.Inf(-1), 10}, []any{0.0, 11}, []any{nan, 12}, []any{0.5, 13}, []any{math.Inf(1), 14})
	sp := Right{Name: "r", LeftOn: 0, On: 0, Lo: FloatBound(-0.25), Hi: FloatBound(0.25), Kind: Left, Payload: []int{1}}
	runJoinCase(t, joinCase{name: "specials", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{sp},
		want: []string{"-Inf | 1 | 10", "-0 | 2 | 11", "NaN | 3 | NULL", "0.25 | 4 | 11", "+Inf | 5 | 14"}})
}

// TestKeyTypes joins on each supported by-key type, including several
// columns at once and differently encoded but comparable string types.
func TestKeyTypes(t *testing.T) {
	cases := []struct {
		name   string
		lt, rt arrow.DataType
		a, b   any
	}{
		{"int32-int64", arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, 1, 2},
		{"uint32", arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint32, 1, 2},
		{"float", f64, arrow.PrimitiveTypes.Float32, 1.5, 2.5},
		{"bool", arrow.FixedWidthTypes.Boolean, arrow.FixedWidthTypes.Boolean, true, false},
		{"string-largestring", str, arrow.BinaryTypes.LargeString, "x", "y"},
		{"binary", arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary, "x", "y"},
		{"fixed binary", &arrow.FixedSizeBinaryType{ByteWidth: 2}, arrow.BinaryTypes.Binary, "xx", "yy"},
		{"decimal", &arrow.Decimal128Type{Precision: 20, Scale: 2}, &arrow.Decimal128Type{Precision: 30, Scale: 2}, 1, 2},
		{"date", arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date32, 1, 2},
		{"timestamp", &arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.TimestampType{Unit: arrow.Microsecond}, 1, 2},
	}
	for _, c := range cases {
		lfs := []arrow.Field{f("t", i64), f("k", c.lt), f("k2", i64), f("lv", i64)}
		rfs := []arrow.Field{f("t", i64), f("k", c.rt), f("k2", i64), f("rv", i64)}
		left := rowsOf(lfs, []any{10, c.a, 1, 1}, []any{10, c.b, 1, 2}, []any{10, c.a, 2, 3}, []any{10, nil, 1, 4})
		right := rowsOf(rfs, []any{1, c.a, 1, 100}, []any{2, c.b, 1, 101}, []any{3, c.a, 2, 102}, []any{4, nil, 1, 103})
		one := Right{Name: "r", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: Unbounded, Hi: IntBound(0), Kind: Left, Payload: []int{3}}
		runJoinCase(t, joinCase{name: c.name + "/one key", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{one},
			want: []string{"10 | " + cellOf(c.lt, c.a) + " | 1 | 1 | 102", "10 | " + cellOf(c.lt, c.b) + " | 1 | 2 | 101",
				"10 | " + cellOf(c.lt, c.a) + " | 2 | 3 | 102", "10 | NULL | 1 | 4 | NULL"}})
		two := one
		two.LeftKeys, two.Keys = []int{1, 2}, []int{1, 2}
		runJoinCase(t, joinCase{name: c.name + "/two keys", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{two},
			want: []string{"10 | " + cellOf(c.lt, c.a) + " | 1 | 1 | 100", "10 | " + cellOf(c.lt, c.b) + " | 1 | 2 | 101",
				"10 | " + cellOf(c.lt, c.a) + " | 2 | 3 | 102", "10 | NULL | 1 | 4 | NULL"}})
	}
}

func cellOf(dt arrow.DataType, v any) string {
	b := array.NewBuilder(memory.NewGoAllocator(), dt)
	defer b.Release()
	appendAny(b, v)
	a := b.NewArray()
	defer a.Release()
	return a.ValueStr(0)
}

// TestHashCollisions forces every key into one hash bucket: exact
// comparison must still keep different keys apart.
func TestHashCollisions(t *testing.T) {
	left := rowsOf(lf, []any{10, "aa", 1}, []any{10, "bb", 2}, []any{10, "cc", 3})
	right := rowsOf(rf, []any{1, "aa", 100}, []any{2, "bb", 101}, []any{3, "zz", 102})
	opts := Options{hashBytes: func([]byte) uint64 { return 42 }, hashU64: func(uint64) uint64 { return 42 }}
	runJoinCase(t, joinCase{name: "strings", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right},
		specs: []Right{keyed(Unbounded, IntBound(0), Left)}, opts: opts,
		want: []string{"10 | aa | 1 | 1 | 100", "10 | bb | 2 | 2 | 101", "10 | cc | 3 | NULL | NULL"}})
	lfi := []arrow.Field{f("t", i64), f("k", i64), f("lv", i64)}
	rfi := []arrow.Field{f("t", i64), f("k", i64), f("rv", i64)}
	lefti := rowsOf(lfi, []any{10, 7, 1}, []any{10, 8, 2}, []any{10, 9, 3})
	righti := rowsOf(rfi, []any{1, 7, 100}, []any{2, 8, 101}, []any{3, 6, 102})
	runJoinCase(t, joinCase{name: "integers", left: lefti, rights: []func(memory.Allocator) arrow.RecordBatch{righti},
		specs: []Right{keyed(Unbounded, IntBound(0), Left)}, opts: opts,
		want: []string{"10 | 7 | 1 | 1 | 100", "10 | 8 | 2 | 2 | 101", "10 | 9 | 3 | NULL | NULL"}})
}

// TestPayloadTypes gathers nested, dictionary and other payload types.
func TestPayloadTypes(t *testing.T) {
	mkRight := func(mem memory.Allocator) arrow.RecordBatch {
		tb := array.NewInt64Builder(mem)
		defer tb.Release()
		tb.AppendValues([]int64{1, 2, 3}, nil)
		ts := tb.NewArray()
		defer ts.Release()
		lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
		defer lb.Release()
		vb := lb.ValueBuilder().(*array.Int32Builder)
		lb.Append(true)
		vb.AppendValues([]int32{1, 2}, nil)
		lb.AppendNull()
		lb.Append(true)
		vb.Append(3)
		list := lb.NewArray()
		defer list.Release()
		sb := array.NewStructBuilder(mem, arrow.StructOf(f("x", i64), f("y", str)))
		defer sb.Release()
		for i := 0; i < 3; i++ {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(i))
			sb.FieldBuilder(1).(*array.StringBuilder).Append("s" + string(rune('a'+i)))
		}
		st := sb.NewArray()
		defer st.Release()
		fl := array.NewFixedSizeListBuilder(mem, 2, arrow.PrimitiveTypes.Int64)
		defer fl.Release()
		fv := fl.ValueBuilder().(*array.Int64Builder)
		for i := 0; i < 3; i++ {
			fl.Append(true)
			fv.AppendValues([]int64{int64(i), int64(i * 10)}, nil)
		}
		fsl := fl.NewArray()
		defer fsl.Release()
		db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: str})
		defer db.Release()
		for _, s := range []string{"red", "blue", "red"} {
			require.NoError(t, db.(*array.BinaryDictionaryBuilder).AppendString(s))
		}
		dict := db.NewArray()
		defer dict.Release()
		bb := array.NewBooleanBuilder(mem)
		defer bb.Release()
		bb.AppendValues([]bool{true, false, true}, []bool{true, true, false})
		bools := bb.NewArray()
		defer bools.Release()
		cols := []arrow.Array{ts, list, st, fsl, dict, bools}
		fields := make([]arrow.Field, len(cols))
		for i, c := range cols {
			fields[i] = arrow.Field{Name: []string{"t", "l", "s", "f", "d", "b"}[i], Type: c.DataType(), Nullable: true}
		}
		return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 3)
	}
	lfs := []arrow.Field{f("t", i64)}
	left := rowsOf(lfs, []any{0}, []any{1}, []any{2}, []any{3}, []any{4})
	sp := Right{Name: "r", LeftOn: 0, On: 0, Lo: IntBound(-1), Hi: IntBound(0), Kind: Left, Payload: []int{1, 2, 3, 4, 5}}
	runJoinCase(t, joinCase{name: "nested", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{mkRight}, specs: []Right{sp},
		want: []string{
			"0 | NULL | NULL | NULL | NULL | NULL",
			`1 | [1,2] | {"x":0,"y":"sa"} | [0,0] | red | true`,
			`2 | NULL | {"x":1,"y":"sb"} | [1,10] | blue | false`,
			`3 | [3] | {"x":2,"y":"sc"} | [2,20] | red | NULL`,
			`4 | [3] | {"x":2,"y":"sc"} | [2,20] | red | NULL`}})
}

func TestSeveralRights(t *testing.T) {
	left := rowsOf(lf, []any{10, "a", 1}, []any{20, "a", 2}, []any{30, "b", 3})
	quotes := rowsOf(rf, []any{9, "a", 100}, []any{19, "a", 101}, []any{29, "b", 102})
	fills := rowsOf(rf, []any{12, "a", 200}, []any{35, "b", 201})
	q := keyed(Unbounded, IntBound(0), Left)
	fl := keyed(IntBound(0), IntBound(5), Inner)
	fl.Name = "fills"
	runJoinCase(t, joinCase{name: "left+inner", left: left,
		rights: []func(memory.Allocator) arrow.RecordBatch{quotes, fills}, specs: []Right{q, fl},
		want: []string{"10 | a | 1 | 9 | 100 | 12 | 200", "30 | b | 3 | 29 | 102 | 35 | 201"}})
	// The same join chained through two operators gives the same rows.
	runJoinCase(t, joinCase{name: "both left", left: left,
		rights: []func(memory.Allocator) arrow.RecordBatch{quotes, fills, quotes}, specs: []Right{q, keyed(IntBound(0), IntBound(5), Left), q},
		want: []string{"10 | a | 1 | 9 | 100 | 12 | 200 | 9 | 100", "20 | a | 2 | 19 | 101 | NULL | NULL | 19 | 101",
			"30 | b | 3 | 29 | 102 | 35 | 201 | 29 | 102"}})
}

func TestEmptyInputs(t *testing.T) {
	some := rowsOf(lf, []any{10, "a", 1})
	none := rowsOf(rf)
	for _, c := range []struct {
		name        string
		left, right func(memory.Allocator) arrow.RecordBatch
		kind        Kind
		want        []string
	}{
		{"empty left", rowsOf(lf), rowsOf(rf, []any{1, "a", 1}), Left, nil},
		{"empty right, left join", some, none, Left, []string{"10 | a | 1 | NULL | NULL"}},
		{"empty right, inner join", some, none, Inner, nil},
		{"all empty", rowsOf(lf), none, Left, nil},
	} {
		runJoinCase(t, joinCase{name: c.name, left: c.left, rights: []func(memory.Allocator) arrow.RecordBatch{c.right},
			specs: []Right{keyed(Unbounded, IntBound(0), c.kind)}, want: c.want})
	}
}

func TestOrderViolation(t *testing.T) {
	sorted := rowsOf(rf, []any{1, "a", 100}, []any{5, "a", 101})
	runJoinCase(t, joinCase{name: "left", left: rowsOf(lf, []any{10, "a", 1}, []any{nil, "a", 2}, []any{9, "a", 3}),
		rights: []func(memory.Allocator) arrow.RecordBatch{sorted}, specs: []Right{keyed(Unbounded, IntBound(0), Left)},
		opts: Options{LeftName: "trades"}, wantErr: "ASOF input trades is not ordered by t: row 3 has t = 9"})
	runJoinCase(t, joinCase{name: "right", left: rowsOf(lf, []any{10, "a", 1}),
		rights:  []func(memory.Allocator) arrow.RecordBatch{rowsOf(rf, []any{1, "a", 100}, []any{7, "b", 101}, []any{3, "a", 102})},
		specs:   []Right{keyed(Unbounded, IntBound(0), Left)},
		wantErr: "ASOF input quotes is not ordered by t: row 3 has t = 3"})
}

func TestValidationErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	mk := func(fields []arrow.Field) operator.Operator {
		return operator.NewBatches(arrow.NewSchema(fields, nil), nil)
	}
	cases := []struct {
		name  string
		left  []arrow.Field
		right []arrow.Field
		sp    Right
		code  string
		msg   string
	}{
		{"on types", []arrow.Field{f("t", i64)}, []arrow.Field{f("t", arrow.FixedWidthTypes.Date32)}, Right{Lo: Unbounded, Hi: IntBound(0)},
			sqlerr.DatatypeMismatch, "ASOF on columns are not comparable: trades.t is int64 but quotes.t is date32"},
		{"key types", []arrow.Field{f("t", i64), f("k", str)}, []arrow.Field{f("t", i64), f("k", i64)},
			Right{Lo: Unbounded, Hi: IntBound(0), LeftKeys: []int{1}, Keys: []int{1}},
			sqlerr.DatatypeMismatch, "ASOF by-keys are not comparable: trades.k is utf8 but quotes.k is int64"},
		{"on type unsupported", []arrow.Field{f("t", arrow.FixedWidthTypes.MonthDayNanoInterval)}, []arrow.Field{f("t", arrow.FixedWidthTypes.MonthDayNanoInterval)}, Right{Lo: Unbounded, Hi: IntBound(0)},
			sqlerr.FeatureNotSupported, "cannot be an ASOF on column"},
		{"key type unsupported", []arrow.Field{f("t", i64), f("k", arrow.ListOf(i64))}, []arrow.Field{f("t", i64), f("k", arrow.ListOf(i64))},
			Right{Lo: Unbounded, Hi: IntBound(0), LeftKeys: []int{1}, Keys: []int{1}},
			sqlerr.FeatureNotSupported, "cannot be an ASOF by-key"},
		{"lo > hi", []arrow.Field{f("t", i64)}, []arrow.Field{f("t", i64)}, Right{Lo: IntBound(5), Hi: IntBound(1)},
			sqlerr.InvalidParameterValue, "lower bound 5 is greater than upper bound 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sp := c.sp
			sp.Name, sp.Input = "quotes", mk(c.right)
			_, err := New(mk(c.left), []Right{sp}, Options{Allocator: mem, LeftName: "trades"})
			require.Error(t, err)
			require.Equal(t, c.code, sqlerr.Code(err))
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

// TestStreamingShape checks one output batch per left batch and, for LEFT,
// the left columns passed through without copying.
func TestStreamingShape(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	left := table(mem, append([]arrow.Field(nil), lf...), []any{1, "a", 1}, []any{2, "a", 2}, []any{3, "a", 3}, []any{4, "b", 4})
	right := table(mem, append([]arrow.Field(nil), rf...), []any{1, "a", 1})
	defer left.Release()
	defer right.Release()
	lbatches := exectest.Split(left, exectest.Layout{Size: 3, Empty: true, Seed: 1}, 0)
	sizes := []int64{}
	data := []*memory.Buffer{}
	for _, b := range lbatches {
		sizes = append(sizes, b.NumRows())
		data = append(data, b.Column(2).Data().Buffers()[1])
	}
	sp := keyed(Unbounded, IntBound(0), Left)
	sp.Input = operator.NewBatches(right.Schema(), exectest.Split(right, exectest.Layout{Size: 1}, 0))
	j, err := New(operator.NewBatches(left.Schema(), lbatches), []Right{sp}, Options{Allocator: mem})
	require.NoError(t, err)
	i := 0
	err = operator.Drain(context.Background(), j, func(b arrow.RecordBatch) error {
		require.Equal(t, sizes[i], b.NumRows())
		if b.NumRows() > 0 {
			require.Same(t, data[i], b.Column(2).Data().Buffers()[1], "left column copied")
		}
		i++
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, len(sizes), i)
}

// blockingSource never ends: it yields batches until its context is
// cancelled.
type blockingSource struct {
	schema *arrow.Schema
	mem    memory.Allocator
	t      int64
}

func (s *blockingSource) Schema() *arrow.Schema      { return s.schema }
func (s *blockingSource) Open(context.Context) error { return nil }
func (s *blockingSource) Close() error               { return nil }
func (s *blockingSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.t++
	return table(s.mem, append([]arrow.Field(nil), s.schema.Fields()...), []any{s.t, "zz", s.t}), nil
}

func TestCancellation(t *testing.T) {
	for _, serial := range []bool{true, false} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		left := table(mem, append([]arrow.Field(nil), lf...), []any{1 << 40, "a", 1})
		// Forward unbounded with a key the right input never has: the join
		// reads the endless right input until cancelled.
		sp := keyed(IntBound(0), Unbounded, Left)
		sp.Input = &blockingSource{schema: arrow.NewSchema(rf, nil), mem: mem}
		j, err := New(operator.NewBatches(left.Schema(), []arrow.RecordBatch{left}), []Right{sp, keyed(Unbounded, IntBound(0), Left)}[:1], Options{Allocator: mem, Serial: serial})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, j.Open(ctx))
		done := make(chan error)
		go func() {
			_, err := j.Next(ctx)
			done <- err
		}()
		cancel()
		err = <-done
		require.True(t, errors.Is(err, context.Canceled), "got %v", err)
		_, err = j.Next(context.Background())
		require.Error(t, err, "a failed join stays failed")
		require.NoError(t, j.Close())
		require.NoError(t, j.Close())
		mem.AssertSize(t, 0)
	}
}

func TestUnsignedWidths(t *testing.T) {
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32} {
		lfs := []arrow.Field{f("t", dt), f("lv", i64)}
		rfs := []arrow.Field{f("t", dt), f("rv", i64)}
		left := rowsOf(lfs, []any{0, 1}, []any{5, 2}, []any{200, 3})
		right := rowsOf(rfs, []any{0, 10}, []any{3, 11}, []any{199, 12})
		sp := Right{Name: "r", LeftOn: 0, On: 0, Lo: IntBound(-2), Hi: IntBound(0), Kind: Left, Payload: []int{1}}
		runJoinCase(t, joinCase{name: dt.String(), left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{sp},
			want: []string{"0 | 1 | 10", "5 | 2 | 11", "200 | 3 | 12"}})
	}
}

func TestSerialWhenOneProc(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	mk := func() operator.Operator { return operator.NewBatches(arrow.NewSchema(rf, nil), nil) }
	_, err := New(mk(), nil, Options{Allocator: mem})
	require.Error(t, err) // no right input at all
	a, b := keyed(Unbounded, IntBound(0), Left), keyed(Unbounded, IntBound(0), Left)
	a.Input, b.Input = mk(), mk()
	j, err := New(mk(), []Right{a, b}, Options{Allocator: mem})
	require.NoError(t, err)
	require.NoError(t, j.Open(context.Background()))
	require.Nil(t, j.workers, "GOMAXPROCS=1 runs right inputs on the caller's goroutine")
	require.NoError(t, j.Close())
}

func TestVarWidthPayloads(t *testing.T) {
	lfs := []arrow.Field{f("t", i64)}
	rfs := []arrow.Field{f("t", i64), f("s", str), f("ls", arrow.BinaryTypes.LargeString), f("b", arrow.BinaryTypes.Binary), f("lb", arrow.BinaryTypes.LargeBinary)}
	left := rowsOf(lfs, []any{0}, []any{1}, []any{2}, []any{3})
	right := rowsOf(rfs, []any{1, "one", "uno", "x1", "y1"}, []any{2, nil, "dos", nil, "y2"}, []any{2, "two", nil, "x2", nil})
	sp := Right{Name: "r", LeftOn: 0, On: 0, Lo: Unbounded, Hi: IntBound(0), Kind: Left, Payload: []int{1, 2, 3, 4}}
	runJoinCase(t, joinCase{name: "strings and binaries", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{sp},
		want: []string{"0 | NULL | NULL | NULL | NULL", "1 | one | uno | eDE= | eTE=", "2 | two | NULL | eDI= | NULL", "3 | two | NULL | eDI= | NULL"}})
}

// TestStrictFloatBounds: l.t > r.t on floats must exclude r.t = l.t at any
// magnitude (adding the smallest float to 1e300 or 10 changes nothing, so
// strictness cannot be an offset).
func TestStrictFloatBounds(t *testing.T) {
	lfs := []arrow.Field{f("t", f64), f("lv", i64)}
	rfs := []arrow.Field{f("t", f64), f("rv", i64)}
	left := rowsOf(lfs, []any{10.0, 1}, []any{1e300, 2})
	right := rowsOf(rfs, []any{9.5, 10}, []any{10.0, 11}, []any{1e299, 12}, []any{1e300, 13}, []any{2e300, 14})
	back := Right{Name: "r", LeftOn: 0, On: 0, Lo: Unbounded, Hi: Bound{Exclusive: true}, Kind: Left, Payload: []int{1}}
	runJoinCase(t, joinCase{name: "backward, exact excluded", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{back},
		want: []string{"10 | 1 | 10", "1e+300 | 2 | 12"}})
	fwd := Right{Name: "r", LeftOn: 0, On: 0, Lo: Bound{Exclusive: true}, Hi: Unbounded, Kind: Left, Payload: []int{1}}
	runJoinCase(t, joinCase{name: "forward, exact excluded", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{fwd},
		want: []string{"10 | 1 | 12", "1e+300 | 2 | 14"}})
}
