package asof

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func keyMajor(lo, hi Bound) Right {
	sp := keyed(lo, hi, Left)
	sp.KeyMajor = true
	return sp
}

func TestKeyMajor(t *testing.T) {
	// Both inputs ordered by (k, t): t restarts in every key group.
	left := rowsOf(lf, []any{10, "a", 1}, []any{30, "a", 2}, []any{5, "b", 3}, []any{25, "b", 4}, []any{1, "c", 5}, []any{7, nil, 6})
	right := rowsOf(rf, []any{8, "a", 100}, []any{29, "a", 101}, []any{2, "b", 102}, []any{26, "b", 103}, []any{3, "d", 104}, []any{1, nil, 105})
	runJoinCase(t, joinCase{name: "backward", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right},
		specs: []Right{keyMajor(Unbounded, IntBound(0))},
		want: []string{"10 | a | 1 | 8 | 100", "30 | a | 2 | 29 | 101", "5 | b | 3 | 2 | 102", "25 | b | 4 | 2 | 102",
			"1 | c | 5 | NULL | NULL", "7 | NULL | 6 | NULL | NULL"}})
	runJoinCase(t, joinCase{name: "nearest", left: left, rights: []func(memory.Allocator) arrow.RecordBatch{right},
		specs: []Right{keyMajor(IntBound(-5), IntBound(5))},
		want: []string{"10 | a | 1 | 8 | 100", "30 | a | 2 | 29 | 101", "5 | b | 3 | 2 | 102", "25 | b | 4 | 26 | 103",
			"1 | c | 5 | NULL | NULL", "7 | NULL | 6 | NULL | NULL"}})
}

func TestKeyMajorOrderErrors(t *testing.T) {
	sorted := rowsOf(rf, []any{1, "a", 100}, []any{2, "b", 101})
	runJoinCase(t, joinCase{name: "left t within a group", left: rowsOf(lf, []any{10, "a", 1}, []any{5, "a", 2}),
		rights: []func(memory.Allocator) arrow.RecordBatch{sorted}, specs: []Right{keyMajor(Unbounded, IntBound(0))},
		opts: Options{LeftName: "trades"}, wantErr: "ASOF input trades is not ordered by (k, t): row 2 has a lower t than the row before it in its key group"})
	runJoinCase(t, joinCase{name: "left groups", left: rowsOf(lf, []any{10, "b", 1}, []any{5, "a", 2}),
		rights: []func(memory.Allocator) arrow.RecordBatch{sorted}, specs: []Right{keyMajor(Unbounded, IntBound(0))},
		opts: Options{LeftName: "trades"}, wantErr: "ASOF input trades is not ordered by (k, t): row 2 starts a key group that sorts before the previous one"})
	runJoinCase(t, joinCase{name: "right groups", left: rowsOf(lf, []any{10, "c", 1}),
		rights:  []func(memory.Allocator) arrow.RecordBatch{rowsOf(rf, []any{1, "b", 100}, []any{2, "a", 101})},
		specs:   []Right{keyMajor(Unbounded, IntBound(0))},
		wantErr: "ASOF input quotes is not ordered by (k, t): row 2 starts a key group that sorts before the previous one"})
	runJoinCase(t, joinCase{name: "right t within a group", left: rowsOf(lf, []any{10, "a", 1}),
		rights:  []func(memory.Allocator) arrow.RecordBatch{rowsOf(rf, []any{5, "a", 100}, []any{2, "a", 101})},
		specs:   []Right{keyMajor(Unbounded, IntBound(0))},
		wantErr: "ASOF input quotes is not ordered by t: row 2 has t = 2"})
}
