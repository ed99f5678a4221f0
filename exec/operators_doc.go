// # Operators
//
// Besides the sources (Batches, FromReader) and the ASOF join (package
// exec/asof), exec provides the relational operators a query plan is
// lowered to. Each has a plain constructor taking its child operator(s),
// an allocator and column indexes, sql/expr expressions or a small options
// struct; expressions are evaluated by package exec/eval with PostgreSQL 15
// semantics (eval.Env carries now() and the session time zone).
//
//   - NewFilter: rows where a boolean expression is TRUE (NULL = FALSE);
//     fully passing batches are forwarded as is.
//   - NewProject: one column per expression; column references pass the
//     input arrays through without copying.
//   - NewLimit: LIMIT/OFFSET by slicing; stops pulling its child once the
//     count is reached.
//   - NewSort: stable multi-key sort, ASC/DESC, NULLS FIRST/LAST with
//     Postgres' defaults (NULLS LAST for ASC, FIRST for DESC); a radix
//     sort when every key has an exact normalized form and no NULLs.
//   - NewTopN: ORDER BY ... LIMIT n keeping only the best n rows; same
//     order as Sort followed by Limit (lower uses it for LIMIT + OFFSET
//     up to 16384 rows).
//   - NewValues: a VALUES list of constant expressions.
//   - NewSeries, NewUnnest: generate_series over integers and unnest of
//     an array's elements, as FROM items.
//   - NewUnionAll: children one after the other.
//   - NewHashAggregate / NewStreamAggregate: GROUP BY with count(*),
//     count, count(DISTINCT), sum, avg, min, max, stddev/variance
//     (sample and population), first/last (input order), bool_and/bool_or/
//     every, string_agg, json_agg/jsonb_agg/json_object_agg;
//     result types as Postgres' (AggResultType). HAVING is a Filter on
//     top. StreamAggregate needs input clustered by the group keys and
//     emits groups as they complete.
//   - NewGroupingSets: GROUPING SETS / ROLLUP / CUBE: one pass over the
//     input feeding one hash aggregation per set, the sets' rows output
//     one set after another with the keys outside the set NULL and the
//     set's index in a column of its own (what grouping() reads).
//   - NewRecursiveUnion, NewWorkTable, NewWorkTableScan: WITH RECURSIVE:
//     the base rows, then the recursive term (rebuilt per iteration) over
//     a scan of the previous iteration's rows until it yields none; UNION
//     drops rows seen before. Rows stream out as produced.
//   - NewHashJoin: INNER or LEFT equi-join with an optional residual
//     predicate; builds the smaller side when both sizes are known, else
//     the right side (and then keeps the left order).
//   - NewCrossJoin: Cartesian product with a small, materialized right side.
//   - NewNestedLoopJoin: any join condition, every kind (INNER, LEFT,
//     RIGHT, FULL): a block nested loop over the materialized right side
//     that evaluates the condition over chunks of candidate pairs; keeps
//     the left order, unmatched right rows last.
//   - NewLateralJoin: INNER or LEFT JOIN LATERAL: reruns the right side
//     (a LateralRunner builds it) per distinct value of the left row's
//     outer values, caching the results; keeps the left order.
//   - NewDistinct: first occurrence of each distinct row.
//   - NewHashSetOp: INTERSECT [ALL] and EXCEPT [ALL] with Postgres'
//     duplicate counts (min(m,n), max(m-n,0)); hashes the right side's
//     distinct rows with a count each, then streams the left.
//   - NewDistinctOn: first row of each run of equal key columns, for
//     input sorted on those keys (SELECT DISTINCT ON); streams in
//     constant memory.
//   - NewWindow: window functions over PARTITION BY / ORDER BY, for input
//     sorted by those keys: ranking and distribution (row_number, rank,
//     dense_rank, percent_rank, cume_dist, ntile), lag/lead, and over a
//     WindowFrame (ROWS, RANGE with offsets, GROUPS; EXCLUDE)
//     first_value, last_value, nth_value and the aggregates count, sum,
//     avg, min, max. A frame minus its exclusion is at most two runs whose
//     ends only move forward, so aggregates slide (add the entering row,
//     subtract the leaving one; min/max by a monotonic deque): linear in
//     the input whatever the frame's width (window_agg.go).
//
// Materializing operators (Sort, TopN, HashAggregate, GroupingSets,
// HashJoin's build side, CrossJoin's and NestedLoopJoin's right side,
// LateralJoin's cached results, Distinct's seen set, HashSetOp's counts,
// RecursiveUnion's working tables and seen set, Window; and
// StreamAggregate for its open group's DISTINCT sets) take a memory
// limit in bytes (0 = unlimited) and fail with SQLSTATE 53200 naming the
// operator and the limit when the data they hold exceeds it. The bytes
// counted are the rows' own bytes (values, offsets, validity) plus an
// estimate of hash-table entries; transient copies while sorting or
// concatenating are not counted. When their allocator is a query's
// *memacct.Account, that account bounds them instead (the whole query's
// memory_limit and the server's budget): the Arrow buffers they hold are
// counted by the allocator, copies included, and their Go-heap state
// (tables, sets, orders) is charged to it. Every operator checks its context once
// per batch: a cancelled context makes Next return ctx.Err(), which
// sqlerr.Code maps to 57014.
package exec
