package asof

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

// The four compatibility inequality forms as the planner emits them for
// an on column off the number line (l.t op r.t).
var inequalityForms = []struct {
	op     string
	lo, hi Bound
}{
	{">=", Unbounded, Bound{}},
	{">", Unbounded, Bound{Exclusive: true}},
	{"<=", Bound{}, Unbounded},
	{"<", Bound{Exclusive: true}, Unbounded},
}

// byteEdgeRight holds the edge cases for byte on columns: empty strings,
// prefixes of each other, duplicates (ties), a NULL t in the middle (it is
// skipped by the order check and never matches), and bytes >= 0x80, which
// sort after ASCII bytewise (C collation).
var (
	byteEdgeRight = [][]any{
		{"", 1}, {"", 2}, {"a", 3}, {"a", 4}, {"ab", 5}, {nil, 6}, {"b", 7},
		{"\x7f", 8}, {"\x80", 9}, {"\xff", 10}, {"\xff", 11},
	}
	byteEdgeLeft = [][]any{
		{nil, 100}, {"", 101}, {"a", 102}, {"aa", 103}, {"ab", 104}, {"abc", 105},
		{"\x80", 106}, {"\xc3\xa9", 107}, {"\xff", 108}, {"\xff\xff", 109},
	}
	// byteEdgeWant is the winning rv per left row, for each form.
	byteEdgeWant = map[string][]any{
		">=": {nil, 2, 4, 4, 5, 5, 9, 9, 11, 11},
		">":  {nil, nil, 2, 4, 4, 5, 8, 9, 9, 11},
		"<=": {nil, 2, 4, 5, 5, 7, 9, 10, 11, nil},
		"<":  {nil, 3, 5, 5, 7, 7, 10, 10, nil, nil},
	}
)

func TestByteOnColumnEdges(t *testing.T) {
	types := []arrow.DataType{str, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary}
	for _, dt := range types {
		for _, form := range inequalityForms {
			lfs := []arrow.Field{f("t", dt), f("lv", i64)}
			rfs := []arrow.Field{f("t", dt), f("rv", i64)}
			want := expectRows(lfs, byteEdgeLeft, byteEdgeWant[form.op])
			for _, kind := range []Kind{Left, Inner} {
				sp := Right{Name: "r", LeftOn: 0, On: 0, Lo: form.lo, Hi: form.hi, Kind: kind, Payload: []int{1}}
				w := want
				if kind == Inner {
					w = dropUnmatched(want)
				}
				runJoinCase(t, joinCase{
					name: fmt.Sprintf("%s/%s/%s", dt, form.op, kind), left: rowsOf(lfs, byteEdgeLeft...),
					rights: []func(memory.Allocator) arrow.RecordBatch{rowsOf(rfs, byteEdgeRight...)},
					specs:  []Right{sp}, want: w,
				})
			}
		}
	}
}

// expectRows renders left rows followed by the expected right value.
func expectRows(lfs []arrow.Field, left [][]any, rv []any) []string {
	rec := table(memory.NewGoAllocator(), append([]arrow.Field(nil), lfs...), left...)
	defer rec.Release()
	var out []string
	for i := range left {
		s := cell(rec.Column(0), i)
		for c := 1; c < int(rec.NumCols()); c++ {
			s += " | " + cell(rec.Column(c), i)
		}
		if rv[i] == nil {
			s += " | NULL"
		} else {
			s += fmt.Sprintf(" | %v", rv[i])
		}
		out = append(out, s)
	}
	return out
}

func dropUnmatched(rows []string) []string {
	var out []string
	for _, r := range rows {
		if len(r) < 7 || r[len(r)-7:] != " | NULL" {
			out = append(out, r)
		}
	}
	return out
}

// TestTextOnColumnWithKeys: by-keys, a NULL key (matches nothing), two
// right inputs of different forms over one left text column, serial and
// concurrent.
func TestTextOnColumnWithKeys(t *testing.T) {
	lfs := []arrow.Field{f("t", str), f("k", str), f("lv", i64)}
	rfs := []arrow.Field{f("t", str), f("k", str), f("rv", i64)}
	left := rowsOf(lfs, []any{"b", "x", 1}, []any{"c", "y", 2}, []any{"d", nil, 3}, []any{"d", "x", 4}, []any{"e", "y", 5})
	right := rowsOf(rfs, []any{"a", "x", 10}, []any{"a", "y", 11}, []any{"b", "x", 12}, []any{"c", nil, 13},
		[]any{"c", "x", 14}, []any{"d", "y", 15}, []any{"f", "x", 16}, []any{"f", "y", 17})
	back := Right{Name: "back", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: Unbounded, Hi: Bound{}, Kind: Left, Payload: []int{2}}
	fwd := Right{Name: "fwd", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: Bound{Exclusive: true}, Hi: Unbounded, Kind: Left, Payload: []int{0, 2}}
	runJoinCase(t, joinCase{
		name: "two-rights", left: left,
		rights: []func(memory.Allocator) arrow.RecordBatch{right, right},
		specs:  []Right{back, fwd},
		want: []string{
			"b | x | 1 | 12 | c | 14",
			"c | y | 2 | 11 | d | 15",
			"d | NULL | 3 | NULL | NULL | NULL",
			"d | x | 4 | 14 | f | 16",
			"e | y | 5 | 15 | f | 17",
		},
	})
	// Key-major: both inputs ordered by (k, t).
	leftKM := rowsOf(lfs, []any{"b", "x", 1}, []any{"d", "x", 4}, []any{"c", "y", 2}, []any{"e", "y", 5}, []any{"d", nil, 3})
	rightKM := rowsOf(rfs, []any{"a", "x", 10}, []any{"b", "x", 12}, []any{"c", "x", 14}, []any{"f", "x", 16},
		[]any{"a", "y", 11}, []any{"d", "y", 15}, []any{"f", "y", 17}, []any{"c", nil, 13})
	back.KeyMajor, fwd.KeyMajor = true, true
	runJoinCase(t, joinCase{
		name: "key-major", left: leftKM,
		rights: []func(memory.Allocator) arrow.RecordBatch{rightKM, rightKM},
		specs:  []Right{back, fwd},
		want: []string{
			"b | x | 1 | 12 | c | 14",
			"d | x | 4 | 14 | f | 16",
			"c | y | 2 | 11 | d | 15",
			"e | y | 5 | 15 | f | 17",
			"d | NULL | 3 | NULL | NULL | NULL",
		},
	})
}

func TestBoolOnColumn(t *testing.T) {
	b := arrow.FixedWidthTypes.Boolean
	lfs := []arrow.Field{f("t", b), f("lv", i64)}
	rfs := []arrow.Field{f("t", b), f("rv", i64)}
	left := [][]any{{false, 1}, {nil, 2}, {true, 3}}
	right := [][]any{{false, 10}, {false, 11}, {true, 12}, {true, 13}}
	want := map[string][]any{">=": {11, nil, 13}, ">": {nil, nil, 11}, "<=": {11, nil, 13}, "<": {12, nil, nil}}
	for _, form := range inequalityForms {
		sp := Right{Name: "r", LeftOn: 0, On: 0, Lo: form.lo, Hi: form.hi, Kind: Left, Payload: []int{1}}
		runJoinCase(t, joinCase{name: "bool" + form.op, left: rowsOf(lfs, left...),
			rights: []func(memory.Allocator) arrow.RecordBatch{rowsOf(rfs, right...)}, specs: []Right{sp},
			want: expectRows(lfs, left, want[form.op])})
	}
}

// TestOrdOrderErrors: a decreasing non-NULL t is 22000 naming the input
// and the row, on either side; NULLs in between are not checked.
func TestOrdOrderErrors(t *testing.T) {
	lfs := []arrow.Field{f("t", str), f("lv", i64)}
	rfs := []arrow.Field{f("t", str), f("rv", i64)}
	good := rowsOf(rfs, []any{"a", 1}, []any{nil, 2}, []any{"b", 3})
	bad := rowsOf(rfs, []any{"a", 1}, []any{nil, 2}, []any{"ab", 3}, []any{"aa", 4}, []any{"z", 5})
	sp := Right{Name: "quotes", LeftOn: 0, On: 0, Lo: Unbounded, Hi: Bound{}, Kind: Left, Payload: []int{1}}
	runJoinCase(t, joinCase{name: "right", left: rowsOf(lfs, []any{"zz", 1}),
		rights: []func(memory.Allocator) arrow.RecordBatch{bad}, specs: []Right{sp},
		opts:    Options{LeftName: "trades"},
		wantErr: "ASOF input quotes is not ordered by t: row 4 has t = aa"})
	runJoinCase(t, joinCase{name: "left", left: rowsOf(lfs, []any{"b", 1}, []any{nil, 2}, []any{"a", 3}),
		rights: []func(memory.Allocator) arrow.RecordBatch{good}, specs: []Right{sp},
		opts:    Options{LeftName: "trades"},
		wantErr: "ASOF input trades is not ordered by t: row 3 has t = a"})
	// The disorder lies beyond what the join reads: no error (the outcome
	// does not depend on batch boundaries).
	runJoinCase(t, joinCase{name: "unread", left: rowsOf(lfs, []any{"a", 1}),
		rights: []func(memory.Allocator) arrow.RecordBatch{bad}, specs: []Right{sp},
		want: []string{"a | 1 | 1"}})
}

func TestOrdValidation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	mk := func(dt arrow.DataType) *arrow.Schema {
		return arrow.NewSchema([]arrow.Field{f("t", dt)}, nil)
	}
	dec := func(s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: 20, Scale: s} }
	cases := []struct {
		name   string
		l, r   arrow.DataType
		lo, hi Bound
		code   string
		msg    string
	}{
		{"text-int", str, i64, Unbounded, Bound{}, sqlerr.DatatypeMismatch, "l.t is utf8 but r.t is int64"},
		{"int-text", i64, str, Unbounded, Bound{}, sqlerr.DatatypeMismatch, "l.t is int64 but r.t is utf8"},
		{"text-binary", str, arrow.BinaryTypes.Binary, Unbounded, Bound{}, sqlerr.DatatypeMismatch, "not comparable"},
		{"decimal-text", dec(2), str, Unbounded, Bound{}, sqlerr.DatatypeMismatch, "not comparable"},
		{"text-range", str, str, IntBound(-1), IntBound(0), sqlerr.FeatureNotSupported, "takes no range"},
		{"text-empty", str, str, Bound{Exclusive: true}, Bound{}, sqlerr.InvalidParameterValue, "greater than"},
		{"decimal-lo-gt-hi", dec(2), dec(2), DecBound(decimal128.FromI64(5)), IntBound(4), sqlerr.InvalidParameterValue, "greater than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			left := operator.NewBatches(mk(c.l), nil)
			right := operator.NewBatches(mk(c.r), nil)
			_, err := New(left, []Right{{Name: "r", Input: right, Lo: c.lo, Hi: c.hi}}, Options{Allocator: mem, LeftName: "l"})
			require.Error(t, err)
			require.Equal(t, c.code, sqlerr.Code(err), "%v", err)
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

// TestMixedKernels: one join whose right inputs use both kernels — an
// integer on column on the number line, a text and a decimal one on the
// comparison kernel — over different left on columns.
func TestMixedKernels(t *testing.T) {
	dt := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	lfs := []arrow.Field{f("t", i64), f("s", str), f("d", dt)}
	left := rowsOf(lfs, []any{1, "a", 100}, []any{5, "b", 250}, []any{9, "c", 50})
	ri := rowsOf([]arrow.Field{f("t", i64), f("v", i64)}, []any{0, 10}, []any{4, 11}, []any{8, 12})
	rs := rowsOf([]arrow.Field{f("s", str), f("v", i64)}, []any{"a", 20}, []any{"b", 21})
	rd := rowsOf([]arrow.Field{f("d", dt), f("v", i64)}, []any{90, 30}, []any{240, 31}, []any{260, 32})
	specs := []Right{
		{Name: "ri", LeftOn: 0, On: 0, Lo: Unbounded, Hi: IntBound(0), Kind: Left, Payload: []int{1}},
		{Name: "rs", LeftOn: 1, On: 0, Lo: Unbounded, Hi: Bound{}, Kind: Left, Payload: []int{1}},
		{Name: "rd", LeftOn: 2, On: 0, Lo: IntBound(-20), Hi: IntBound(20), Tie: PreferLater, Kind: Inner, Payload: []int{1}},
	}
	runJoinCase(t, joinCase{name: "mixed", left: left,
		rights: []func(memory.Allocator) arrow.RecordBatch{ri, rs, rd}, specs: specs,
		// The left decimal column is not sorted (100, 250, 50): the join
		// reports it at row 3, whichever kernel gets there.
		wantErr: "ASOF input left input is not ordered by d: row 3 has d = 0.5"})
	left = rowsOf(lfs, []any{1, "a", 100}, []any{5, "b", 250}, []any{9, "c", 250})
	runJoinCase(t, joinCase{name: "mixed-ordered", left: left,
		rights: []func(memory.Allocator) arrow.RecordBatch{ri, rs, rd}, specs: specs,
		want: []string{"1 | a | 1 | 10 | 20 | 30", "5 | b | 2.5 | 11 | 21 | 32", "9 | c | 2.5 | 12 | 21 | 32"}})
}

// textSource is skewedSource with the on column as zero-padded text
// (bytewise order is numeric order).
type textSource struct{ skewedSource }

func (s *textSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.sent == s.batches {
		return nil, io.EOF
	}
	rows := make([][]any, s.batchRows)
	for i := range rows {
		t := s.sent*s.batchRows + i
		key := "hot"
		if i == 0 && s.sent < s.rare {
			key = fmt.Sprintf("rare-%d", s.sent)
		}
		rows[i] = []any{fmt.Sprintf("%09d", t), key, int64(t)}
	}
	s.sent++
	return table(s.mem, append([]arrow.Field(nil), s.schema.Fields()...), rows...), nil
}

// TestTextBoundedMemory: the comparison kernel compacts like the
// number-line one, so rare keys do not pin their batches.
func TestTextBoundedMemory(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const batchRows, batches, rare = 1024, 200, 60
	fields := []arrow.Field{f("t", str), f("k", str), f("v", i64)}
	src := func() *textSource {
		return &textSource{skewedSource{schema: arrow.NewSchema(fields, nil), mem: mem, batches: batches, rare: rare, batchRows: batchRows}}
	}
	sp := Right{Name: "r", Input: src(), LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: Unbounded, Hi: Bound{}, Kind: Left, Payload: []int{2}}
	j, err := New(src(), []Right{sp}, Options{Allocator: mem, compactSlack: 8 * batchRows})
	require.NoError(t, err)
	defer j.Close()
	ctx := context.Background()
	require.NoError(t, j.Open(ctx))
	k := j.rights[0].(*ordRight[string])
	maxRetained, rows := int64(0), 0
	for {
		b, err := j.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		lv, rv := b.Column(2).(*array.Int64), b.Column(3).(*array.Int64)
		for i := 0; i < int(b.NumRows()); i++ {
			require.Equal(t, lv.Value(i), rv.Value(i)) // its own right row
		}
		rows += int(b.NumRows())
		b.Release()
		maxRetained = max(maxRetained, k.retained)
	}
	require.Equal(t, batches*batchRows, rows)
	require.Greater(t, k.compactions, 0)
	require.LessOrEqual(t, maxRetained, int64(8*batchRows+4*batchRows+2*rare))
}
