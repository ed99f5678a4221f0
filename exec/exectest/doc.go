// Package exectest is the harness every operator test runs through: it
// reruns a case at batch sizes 1, 2, 3, 7 and 1024, at random split points,
// with empty batches injected, and for operators that run in parallel
// (Case.Parallel) at 1, 2, 3 and 8 workers, each time under a fresh
// memory.CheckedAllocator that must end at zero bytes, and requires every
// run to give the same answer.
//
// Example:
//
//	exectest.Run(t, exectest.Case{
//		Inputs: func(mem memory.Allocator) []arrow.RecordBatch { return []arrow.RecordBatch{left, right} },
//		Build: func(mem memory.Allocator, in []operator.Operator) (operator.Operator, error) {
//			return asof.New(in[0], []asof.Right{{Input: in[1], ...}}, asof.Options{Allocator: mem})
//		},
//		Check: func(t *testing.T, got arrow.RecordBatch, err error) { ... },
//	})
package exectest
