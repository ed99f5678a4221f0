// Package exec holds asofsql's vectorized execution model: pull-based
// operators that produce Arrow record batches, and the adapters between
// operators and arrow-go's RecordReader.
//
// Contract of an Operator:
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
