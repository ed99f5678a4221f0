// Package memacct accounts for the memory of queries: one Account per
// query, all of a server's accounts drawing on one Budget.
//
// An Account is a memory.Allocator wrapping the engine's allocator, so
// every Arrow buffer a query allocates (operator outputs, expression
// results, sort and join buffers) is counted as it is allocated and
// uncounted as it is freed, with atomic counters (parallel operators share
// the account). Go-heap state that grows with the input (hash tables, the
// set of DISTINCT rows, aggregate state, sort orders, string_agg values)
// is charged explicitly with Grow.
//
// Contract:
//   - Arrow's Allocate cannot fail, so limits are enforced by checks: Grow
//     and Need refuse before the memory is taken, Check refuses once the
//     account is over. The evaluator checks after each expression it
//     evaluates on a batch, operators check as they retain batches and
//     charge their tables, kernels whose output size depends on a value
//     (lpad, rpad) call Need with that size before building it, and the
//     session checks every batch a query returns.
//   - Past the query's limit (memory_limit) or the budget's, the error is
//     53200 "out of memory" with a detail naming the limit.
//   - When the budget overflows, the newest query holding memory fails
//     (and its context is cancelled with that error), not the one that
//     asked: older queries finish. Memory of a query already failing
//     counts as returned.
//   - Close, at the end of the query, returns explicit charges to the
//     budget; Arrow buffers stay counted until freed (ArrowBytes is zero
//     when every batch of the query has been released).
//
// Example:
//
//	budget := memacct.NewBudget(256 << 20) // the server's --memory-limit
//	ctx, cancel := context.WithCancelCause(ctx)
//	acct := memacct.Open(budget, memory.DefaultAllocator, 64<<20, cancel)
//	defer acct.Close()
//	// allocate the query's batches from acct; charge a hash table:
//	if err := acct.Grow("hash join", tableBytes); err != nil {
//		return err // 53200
//	}
package memacct
