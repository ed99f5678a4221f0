// Package lower is the one place where plans become operators: it walks a
// planner.Node tree (plain data) and builds the exec operator tree that runs
// it, reading tables from a catalog snapshot.
//
// Contract:
//   - Imports flow one way: the planner imports nothing of exec, and exec
//     nothing of the planner; lower imports both (planner, exec, exec/asof,
//     exec/eval) and the catalog. Its one caller is the root package's
//     session, which plans a statement, lowers it with Query and drains the
//     operator.
//   - Statement parameters ($n) are converted to typed literals by Bind and
//     substituted into every expression (Env.Params) before operators are
//     built.
//   - Subquery expressions run through eval.Env.Subquery, which lower
//     sets: per distinct combination of outer values it builds the
//     subquery's plan with its OuterRefs bound as literals (like
//     parameters), reads what the expression needs and closes it.
//   - The root operator's schema carries the plan's column names and SQL
//     types (sqltypes field metadata), so consumers need nothing else.
//   - Lower takes ownership of nothing: the returned operator owns the
//     scans it opened; closing it releases them. The snapshot must outlive
//     the operator.
//   - A planner.Merge over an AsofJoin whose inputs are Repartitions is
//     one exec/asof.NewParallel operator with the Merge's worker count;
//     each Repartition's input is built once and read by the workers in
//     turn. A Merge with Morsels over an AsofJoin of Scans is one
//     exec/asof.NewMorsel operator. A Repartition anywhere else is an
//     internal error.
//   - A FinalAggregate (or GatherMerge) is one exec.ParallelHashAggregate
//     (exec.ParallelSort): the input of the Morsels below it is built
//     once, and the Filters and Projects between the Morsels and the
//     PartialAggregate (Sort) once per worker, over the worker's
//     exec.MorselView. EXPLAIN ANALYZE sums the workers' counters (times
//     add up over workers); a PartialAggregate counts the rows its
//     workers aggregated.
//   - With Env.Memo set (a prepared statement's kept plan), lowering reuses
//     what its earlier lowerings of the same plan built that depends on
//     the plan alone (projections' output schemas, checked against the
//     compiled expressions' types); operators are still built afresh.
//   - A ParallelHashJoin is one exec.ParallelHashJoin: its Join's right
//     input and the input of the Morsels below its left are built once,
//     the Filters and Projects between the Morsels and the Join once per
//     worker.
//   - A ParallelWindow is one exec.ParallelWindow: the input of the
//     Morsels below its bottom Window is built once, the Filters and
//     Projects above the Morsels, and each Window's Sort and Window, once
//     per worker (a Window counts its workers' rows in EXPLAIN ANALYZE).
//   - With Env.Analysis set, every plan node's operator is wrapped in a
//     counting operator (rows, batches, time including children) for
//     EXPLAIN ANALYZE; Analysis.Text renders the plan with those figures.
//
// Example:
//
//	snap, err := cat.Snapshot()
//	if err != nil { ... }
//	defer snap.Release()
//	params, err := lower.Bind(q.Params, args, opts) // $1..$n as literals
//	if err != nil { ... }
//	op, err := lower.Query(ctx, snap, q.Root, lower.Env{Mem: mem, Params: params,
//		Eval: eval.Env{Now: stmtStart, Options: opts}})
//	if err != nil { ... }
//	err = exec.Drain(ctx, op, func(b arrow.RecordBatch) error { ... }) // opens and closes op
package lower
