// Package vec holds the typed loops over Arrow arrays of SQL values that
// the expression evaluator (exec/eval) and the scalar function kernels
// (sql/functions) share: reading fixed-width values in place, building
// arrays without per-value builder calls, NULL masks, merging rows of
// several arrays (Pick, Gather), Postgres' order of values (Comparator),
// and the per-value integer, numeric and timestamp rules both apply
// (range checks with Postgres' errors, decimal rescaling, timestamp +
// interval).
//
// Contract:
//   - Arrays hold the Arrow representation sqltypes gives each SQL type
//     (Type.Arrow); a function taking a sqltypes.Type trusts that the
//     arrays match it.
//   - Every array returned is new and owned by the caller; buffers come
//     from the allocator passed in (FinishFixed: nil means the default).
//   - Values and the slices read from arrays alias the arrays' buffers: do
//     not write through them.
//   - Errors are *sqlerr.Error with Postgres' SQLSTATE and text (22003
//     "integer out of range", "numeric field overflow", 22008 "timestamp
//     out of range").
//
// The package imports Arrow, sqltypes, sqlerr and exec/operator (the
// SQL-free operator contract, for its Gather and CmpFloat: one copy of
// each in the engine) only, so that the planner (through sql/functions)
// can import it without importing the executor.
//
// Example: x * 2 over an int4 column, NULLs kept, overflow checked:
//
//	in, err := vec.ReadInts(col, sqltypes.Int4Type) // []int64, a copy
//	for i := range in {
//		in[i] *= 2
//	}
//	out, err := vec.WriteInts(mem, sqltypes.Int4Type, in, vec.Validity(col.Len(), col))
//	// err is 22003 "integer out of range" for a valid row that overflows
//	defer out.Release()
package vec
