// Package operator is the contract every asofsql execution operator
// implements, and the Arrow-only building blocks operators share. It
// imports nothing of the SQL layer (no expressions, no SQL types), so an
// operator such as the ASOF join (exec/asof) can be built and used with
// Arrow data alone; package exec re-exports it for the relational
// operators.
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
// Besides the interface: Batches (a source over batches in memory),
// FromReader and ToReader (adapters to and from arrow-go's RecordReader),
// Drain (open, read to the end, close), Pool (an allocator recycling the
// large output buffers operators emit per batch), Gather (a typed take
// from several source arrays at once, which operators and the storage
// engine share) and CmpFloat (PostgreSQL's order of floats, NaN above
// every other value).
//
// Example:
//
//	src := operator.NewBatches(schema, batches) // takes ownership of batches
//	err := operator.Drain(ctx, src, func(b arrow.RecordBatch) error {
//		use(b) // Drain releases b after fn returns
//		return nil
//	})
package operator
