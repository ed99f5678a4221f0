package asof

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var (
	lf = []arrow.Field{f("t", i64), f("k", str), f("lv", i64)}
	rf = []arrow.Field{f("t", i64), f("k", str), f("rv", i64)}
)

// keyed is a right input matched on t (column 0) and k (column 1), emitting
// the matched right t and rv.
func keyed(lo, hi Bound, kind Kind) Right {
	return Right{Name: "quotes", LeftOn: 0, On: 0, LeftKeys: []int{1}, Keys: []int{1}, Lo: lo, Hi: hi, Kind: kind, Payload: []int{0, 2}}
}

func TestRanges(t *testing.T) {
	left := rowsOf(lf, []any{10, "a", 1}, []any{20, "a", 2}, []any{30, "a", 3}, []any{40, "b", 4})
	right := rowsOf(rf,
		[]any{5, "a", 100}, []any{10, "a", 101}, []any{18, "a", 102}, []any{23, "a", 103},
		[]any{30, "b", 104}, []any{45, "b", 105})
	cases := []struct {
		name   string
		lo, hi Bound
		tie    Tie
		want   []string
	}{
		{"backward unbounded", Unbounded, IntBound(0), PreferEarlier, []string{
			"10 | a | 1 | 10 | 101", "20 | a | 2 | 18 | 102", "30 | a | 3 | 23 | 103", "40 | b | 4 | 30 | 104"}},
		{"backward tolerance 5", IntBound(-5), IntBound(0), PreferEarlier, []string{
			"10 | a | 1 | 10 | 101", "20 | a | 2 | 18 | 102", "30 | a | 3 | NULL | NULL", "40 | b | 4 | NULL | NULL"}},
		{"backward excluding exact", IntBound(-10), IntBound(-1), PreferEarlier, []string{
			"10 | a | 1 | 5 | 100", "20 | a | 2 | 18 | 102", "30 | a | 3 | 23 | 103", "40 | b | 4 | 30 | 104"}},
		{"forward", IntBound(0), IntBound(10), PreferEarlier, []string{
			"10 | a | 1 | 10 | 101", "20 | a | 2 | 23 | 103", "30 | a | 3 | NULL | NULL", "40 | b | 4 | 45 | 105"}},
		{"forward excluding exact", IntBound(1), IntBound(10), PreferEarlier, []string{
			"10 | a | 1 | 18 | 102", "20 | a | 2 | 23 | 103", "30 | a | 3 | NULL | NULL", "40 | b | 4 | 45 | 105"}},
		{"forward unbounded", IntBound(0), Unbounded, PreferEarlier, []string{
			"10 | a | 1 | 10 | 101", "20 | a | 2 | 23 | 103", "30 | a | 3 | NULL | NULL", "40 | b | 4 | 45 | 105"}},
		{"nearest 5", IntBound(-5), IntBound(5), PreferEarlier, []string{
			"10 | a | 1 | 10 | 101", "20 | a | 2 | 18 | 102", "30 | a | 3 | NULL | NULL", "40 | b | 4 | 45 | 105"}},
		{"exact", IntBound(0), IntBound(0), PreferEarlier, []string{
			"10 | a | 1 | 10 | 101", "20 | a | 2 | NULL | NULL", "30 | a | 3 | NULL | NULL", "40 | b | 4 | NULL | NULL"}},
		{"asymmetric [-3, 7]", IntBound(-3), IntBound(7), PreferEarlier, []string{
			"10 | a | 1 | 10 | 101", "20 | a | 2 | 18 | 102", "30 | a | 3 | NULL | NULL", "40 | b | 4 | 45 | 105"}},
		{"window far in the past", IntBound(-20), IntBound(-11), PreferEarlier, []string{
			"10 | a | 1 | NULL | NULL", "20 | a | 2 | 5 | 100", "30 | a | 3 | 18 | 102", "40 | b | 4 | NULL | NULL"}},
		{"window in the future only", IntBound(4), IntBound(8), PreferEarlier, []string{
			"10 | a | 1 | 18 | 102", "20 | a | 2 | NULL | NULL", "30 | a | 3 | NULL | NULL", "40 | b | 4 | 45 | 105"}},
	}
	for _, c := range cases {
		sp := keyed(c.lo, c.hi, Left)
		sp.Tie = c.tie
		runJoinCase(t, joinCase{name: c.name, left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{sp}, want: c.want})
	}
}

func TestInnerDropsUnmatched(t *testing.T) {
	left := rowsOf(lf, []any{10, "a", 1}, []any{20, "x", 2}, []any{30, "a", 3}, []any{nil, "a", 4})
	right := rowsOf(rf, []any{5, "a", 100}, []any{25, "a", 101})
	runJoinCase(t, joinCase{name: "inner", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right},
		specs: []Right{keyed(IntBound(-5), IntBound(0), Inner)},
		want:  []string{"10 | a | 1 | 5 | 100", "30 | a | 3 | 25 | 101"}})
}

func TestTies(t *testing.T) {
	left := rowsOf(lf, []any{10, "a", 1}, []any{20, "a", 2}, []any{30, "a", 3})
	// Several right rows share t = 10 and t = 25; 15 and 25 are equidistant
	// from 20.
	right := rowsOf(rf,
		[]any{10, "a", 100}, []any{10, "a", 101}, []any{10, "a", 102},
		[]any{15, "a", 103}, []any{25, "a", 104}, []any{25, "a", 105}, []any{35, "a", 106}, []any{35, "a", 107})
	earlier := keyed(IntBound(-5), IntBound(5), Left)
	later := earlier
	later.Tie = PreferLater
	runJoinCase(t, joinCase{name: "prefer earlier", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{earlier},
		// Exact match at 10 takes the last of the three; 20 is equidistant
		// from 15 and 25 and takes 15; 30 is equidistant from 25 (last of
		// two, Δ<0) and 35 (first of two, Δ>0).
		want: []string{"10 | a | 1 | 10 | 102", "20 | a | 2 | 15 | 103", "30 | a | 3 | 25 | 105"}})
	runJoinCase(t, joinCase{name: "prefer later", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{later},
		want: []string{"10 | a | 1 | 10 | 102", "20 | a | 2 | 25 | 104", "30 | a | 3 | 35 | 106"}})
	fwd := keyed(IntBound(1), IntBound(30), Left)
	runJoinCase(t, joinCase{name: "forward takes first of equal t", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right}, specs: []Right{fwd},
		want: []string{"10 | a | 1 | 15 | 103", "20 | a | 2 | 25 | 104", "30 | a | 3 | 35 | 106"}})
}

func TestNulls(t *testing.T) {
	left := rowsOf(lf, []any{nil, "a", 0}, []any{10, "a", 1}, []any{20, nil, 2}, []any{30, "a", 3}, []any{nil, nil, 4})
	right := rowsOf(rf,
		[]any{5, "a", 100}, []any{nil, "a", 101}, []any{8, nil, 102}, []any{9, "a", nil}, []any{nil, nil, 103}, []any{25, "a", 104}, []any{nil, "a", 105})
	runJoinCase(t, joinCase{name: "nulls", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right},
		specs: []Right{keyed(Unbounded, IntBound(0), Left)},
		// A match is a whole row even when its payload is NULL (10 takes
		// the row at 9). NULL keys match nothing; NULL t never matches.
		want: []string{"NULL | a | 0 | NULL | NULL", "10 | a | 1 | 9 | NULL", "20 | NULL | 2 | NULL | NULL",
			"30 | a | 3 | 25 | 104", "NULL | NULL | 4 | NULL | NULL"}})
}

func TestExtremeValues(t *testing.T) {
	minI, maxI := int64(math.MinInt64), int64(math.MaxInt64)
	left := rowsOf(lf, []any{minI, "a", 1}, []any{-1, "a", 2}, []any{0, "a", 3}, []any{maxI, "a", 4})
	right := rowsOf(rf, []any{minI, "a", 100}, []any{-2, "a", 101}, []any{1, "a", 102}, []any{maxI, "a", 103})
	runJoinCase(t, joinCase{name: "backward over the whole line", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right},
		specs: []Right{keyed(IntBound(minI), IntBound(0), Left)},
		want: []string{"-9223372036854775808 | a | 1 | -9223372036854775808 | 100", "-1 | a | 2 | -2 | 101",
			"0 | a | 3 | -2 | 101", "9223372036854775807 | a | 4 | 9223372036854775807 | 103"}})
	runJoinCase(t, joinCase{name: "forward over the whole line", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right},
		specs: []Right{keyed(IntBound(1), IntBound(maxI), Left)},
		want: []string{"-9223372036854775808 | a | 1 | -2 | 101", "-1 | a | 2 | 1 | 102",
			"0 | a | 3 | 1 | 102", "9223372036854775807 | a | 4 | NULL | NULL"}})
	runJoinCase(t, joinCase{name: "offsets that overflow", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right},
		specs: []Right{keyed(IntBound(maxI), IntBound(maxI), Left)},
		want: []string{"-9223372036854775808 | a | 1 | NULL | NULL", "-1 | a | 2 | NULL | NULL",
			"0 | a | 3 | 9223372036854775807 | 103", "9223372036854775807 | a | 4 | NULL | NULL"}})
	runJoinCase(t, joinCase{name: "negative offsets that underflow", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right},
		specs: []Right{keyed(IntBound(minI), IntBound(minI), Left)},
		// Δ = MinInt64 exactly: only from l = 0 is r = MinInt64 reachable.
		want: []string{"-9223372036854775808 | a | 1 | NULL | NULL", "-1 | a | 2 | NULL | NULL",
			"0 | a | 3 | -9223372036854775808 | 100", "9223372036854775807 | a | 4 | NULL | NULL"}})
}

func TestSemiAnti(t *testing.T) {
	left := rowsOf(lf, []any{10, "a", 1}, []any{20, "x", 2}, []any{30, "a", 3}, []any{nil, "a", 4}, []any{40, nil, 5})
	right := rowsOf(rf, []any{5, "a", 100}, []any{25, "a", 101}, []any{35, nil, 102})
	rights := []func(memory.Allocator) arrow.RecordBatch{right}
	// Payload is ignored: only the left columns come out.
	runJoinCase(t, joinCase{name: "semi", left: left, rights: rights,
		specs: []Right{keyed(IntBound(-5), IntBound(0), Semi)},
		want:  []string{"10 | a | 1", "30 | a | 3"}})
	runJoinCase(t, joinCase{name: "anti", left: left, rights: rights,
		specs: []Right{keyed(IntBound(-5), IntBound(0), Anti)},
		want:  []string{"20 | x | 2", "NULL | a | 4", "40 | NULL | 5"}})
	// With a second input, each filters on its own.
	runJoinCase(t, joinCase{name: "semi then left", left: left, rights: append(rights, right),
		specs: []Right{keyed(Unbounded, IntBound(0), Semi), keyed(IntBound(0), IntBound(10), Left)},
		want:  []string{"10 | a | 1 | NULL | NULL", "30 | a | 3 | NULL | NULL"}})
}
