// Package exec holds asofsql's vectorized relational operators: pull-based
// operators that produce Arrow record batches, lowered from query plans and
// evaluating sql/expr expressions through package exec/eval.
//
// The operator contract itself (Operator, the Batches source, the
// RecordReader adapters, Drain, the buffer Pool) lives in package
// exec/operator, which imports nothing of the SQL layer so that an operator
// like the ASOF join (exec/asof) depends on Arrow alone; exec re-exports
// those names (exec.Operator is operator.Operator), so its callers need
// not import both. The contract, in short:
//   - Open is called once before Next; Close is idempotent, may be called
//     without Open, and closes the operator's children.
//   - Next returns a batch the caller owns (and must Release) or io.EOF when
//     the stream is exhausted. Batches may be empty (zero rows); consumers
//     must tolerate that.
//   - The context passed to Open and Next is honoured within one batch:
//     a cancelled context makes Next return its error.
//   - Operators are not safe for concurrent use; one goroutine drives one
//     operator tree (an operator may run goroutines of its own inside).
//
// Parallel operators (ParallelHashAggregate, ParallelSort, ParallelHashJoin,
// ParallelWindow) read a Morsels
// source: the batches of one operator handed to workers one at a time,
// numbered in input order, each worker reading through its MorselView and
// its own copies of the filters and projections above it. Their output is
// the serial operator's (see each), and each worker's state is bounded by
// the operator's memory limit (or the query's account). The aggregate's
// and the sort's workers (and the window's) finish within the first Next; the hash join's
// stream (at most two morsels per worker ahead of the output) until the
// input ends or Close stops them.
//
// Example:
//
//	src := exec.NewBatches(schema, batches) // takes ownership of batches
//	defer src.Close()
//	if err := src.Open(ctx); err != nil { ... }
//	for {
//		b, err := src.Next(ctx)
//		if err == io.EOF { break }
//		if err != nil { ... }
//		use(b)
//		b.Release()
//	}
package exec
