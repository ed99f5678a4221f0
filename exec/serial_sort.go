package exec

import (
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/asofsql/asofsql/sqltypes"
)

// NewSerialSort returns the sort of child by keys on one core, with the
// fastest algorithm that applies: for one or two keys that are all
// numbers, dates or timestamps, a ParallelSort with one worker, whose
// range path (parallel_sort_range.go) sorts the normalized keys without
// concatenating the input and decodes the key columns instead of
// gathering them, about twice as fast as Sort on 10M rows; else Sort.
// Both give the same rows in the same order (stable), so a plan at one
// worker and at several differ only in speed. (Should a key column hold
// a NULL, the one-worker ParallelSort merges its single run instead,
// still in Sort's order.) Like NewSort, it does not take child when it
// fails.
func NewSerialSort(child Operator, mem memory.Allocator, keys []SortKey, opts SortOptions) (Operator, error) {
	types, err := checkKeys(child.Schema(), keys)
	if err != nil {
		return nil, err
	}
	if !rangeSortable(types) {
		return NewSort(child, mem, keys, opts)
	}
	m := NewMorsels(child)
	v := m.View()
	return NewParallelSort(m, []*MorselView{v}, []Operator{v}, mem, keys, opts)
}

// rangeSortable reports whether a sort by keys of these types may take
// ParallelSort's range path (NULLs aside, which only the data shows).
func rangeSortable(types []sqltypes.Type) bool {
	return len(types) > 0 && len(types) <= 2 && numericKeys(types)
}

// numericKeys reports whether every key is a number, date or timestamp:
// keys whose normalized uint64 forms compare as the values do, across
// batches (ParallelSort's fast merge and range path).
func numericKeys(types []sqltypes.Type) bool {
	for _, t := range types {
		switch t.Kind {
		case sqltypes.Int2, sqltypes.Int4, sqltypes.Date, sqltypes.Int8, sqltypes.Timestamp, sqltypes.TimestampTZ,
			sqltypes.Float4, sqltypes.Float8:
		default:
			return false
		}
	}
	return true
}
