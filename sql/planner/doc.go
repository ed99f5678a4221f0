// Package planner turns a parsed statement into a bound, validated,
// ordered plan: plain-data nodes that a single lowering step turns into
// exec operators. It never imports exec: nodes carry resolved column
// indexes, sql/expr expressions and everything an operator needs.
//
// # Contract
//
//   - Build(cat, stmt, opts) binds names against a Catalog (Postgres rules:
//     aliases, qualified columns, USING merging, SELECT * as spec §2.6,
//     CTEs, subqueries in FROM), types every expression with Postgres'
//     implicit casts (integer widths, varchar/text, unknown literals and
//     parameters take their context's type) and infers $n types (Unknown
//     where nothing constrains one). Unconstrained NUMERIC expressions get
//     Postgres' display scale where it can be known at plan time
//     (sqltypes.NumericDisplay: literals, + - * / %, sum, avg, casts;
//     rounding and math functions and EXTRACT fields through their type
//     rules); an INSERT/UPDATE into varchar(n) is an assignment Cast
//     (Cast.Assign).
//   - A scalar function call resolves by name or alias to its
//     sql/functions.Def, whose type rule coerces the arguments and gives
//     the result type (bind_call.go runs it); the bound expr.Func holds
//     the Def, which the evaluator runs. Operators and syntax the planner
//     implements with a function (x ~ p, x op ANY (array), arr[i], ::t[],
//     array || array) build calls of the Def directly.
//   - A subquery in an expression (scalar, EXISTS, IN, ANY/ALL, ARRAY) is
//     an expr.Subquery holding its own optimized, validated plan; a column
//     it resolves in an enclosing query is an expr.OuterRef in that plan
//     and an entry of the Subquery's Args (an expression over the
//     enclosing row). EXPLAIN prints the plan as SubPlan n.
//   - Every ASOF form of spec §1 becomes one AsofJoin node; a chain keyed
//     off the same left input becomes one node with N rights (§2.7).
//     Right-only ON conditions become a Filter on that right input (§2.5);
//     others are 0A000 naming the condition. Literal bounds are folded to
//     the on column's physical unit (days, microseconds, unscaled decimal
//     units, float) and checked per §3: 22023 lo > hi at the lower bound,
//     42601 a bound that is not a constant, 42804 a bound of the wrong type
//     with a hint showing the right spelling. A parameter or a constant
//     expression (-10 + 1) is type-checked and kept in Bound.Param or
//     Bound.Expr; lowering evaluates it per execution and converts and
//     checks it with AsofBoundValue and CheckAsofRange.
//   - Each Node reports Ordering (what its output is ordered by, with
//     equivalent and constant columns, see sql/ordering), RequiredOrdering
//     (per child) and PreservesOrder (per child). Validate rejects an ASOF
//     input that is not provably ordered by its on column (or, for both
//     inputs, by keys then t) with 0A000 naming the input and column and
//     a hint giving both fixes (spec §4). The planner never sorts on its
//     own: Sort comes only from ORDER BY, and from DISTINCT ON, whose
//     DistinctOn node requires its keys sorted (ORDER BY's leading keys,
//     else ascending) and keeps the first row of each run.
//   - Rewrites keep results identical: WHERE conjuncts move below joins
//     (never into an ASOF join's right input, never below an ASOF RIGHT
//     or FULL join, never below the null-extended side of a LEFT join), comparisons with constants on a
//     table's first ordering column become Scan.Range (segment pruning),
//     and projections are pruned so scans read only needed columns.
//   - A LATERAL subquery or a function in FROM is bound with the FROM
//     items before it as an enclosing level (lateral.go): its references
//     to them are OuterRefs, and the join a LateralJoin whose Args are the
//     referenced values. Any other FROM item may not refer to the items
//     before it (42P01, as in PostgreSQL).
//   - Parallel plans (Options.Workers > 1, parallel.go): an AsofJoin over
//     stored ordered tables with a finite upper bound and integer, date or
//     timestamp on columns gets a Merge with Morsels set (the left table
//     cut into runs of rows, no Repartition); another AsofJoin whose
//     right inputs share a by-key gets a Repartition (hash of those keys,
//     N workers) over each input and an order-preserving Merge above it;
//     both state their orderings and Validate runs again on the result.
//     A join left serial records why in AsofJoin.Serial (EXPLAIN shows it).
//     An Aggregate whose calls all combine becomes a FinalAggregate over
//     a PartialAggregate, and a Sort (not under a Limit, over a table or a
//     join) a GatherMerge over it; below either, a Morsels node hands the
//     input's batches to the workers, above the first node that is not a
//     parallel-safe Filter or Project. An Aggregate left serial records
//     why in Aggregate.Serial. A hash Join whose left rows come from a
//     table or a join becomes a ParallelHashJoin over it, with a Morsels
//     below its left Filters and Projects (its right side built once); one
//     left serial records why in Join.Serial. A Window with a PARTITION
//     BY becomes a ParallelWindow over it (parallel_window.go), with a
//     Morsels below its input's Filters and Projects; Windows stacked on
//     it whose PARTITION BYs share columns join it (split by the shared
//     ones). One left serial records why in Window.Serial. Each gather
//     gets the degree its largest scanned table's size pays for, at most
//     Options.Workers, and stays serial (saying why) below
//     Options.MinParallelBytes; the sort stays serial while it does not
//     pay (parallel_degree.go).
//   - Nodes: Scan, Filter, Project, AsofJoin, Sort, Limit, Aggregate, Join
//     (a hash join on its equalities with a residual, else a nested loop,
//     or cross; every kind), LateralJoin, Values,
//     UnionAll, SetOp (INTERSECT/EXCEPT [ALL]), Distinct, DistinctOn, Window,
//     RecursiveCTE with its WorkTable (WITH RECURSIVE), and the parallel
//     Repartition, Merge, Morsels, PartialAggregate, FinalAggregate,
//     GatherMerge, ParallelHashJoin and ParallelWindow. An Aggregate with Sets is GROUP BY GROUPING
//     SETS / ROLLUP / CUBE.
//   - Statement plans (Plan): Query, CreateTable, DropTable, Insert, Copy,
//     Set, Show, Transaction, Explain, Prepare, Execute, Deallocate,
//     Discard. They are plain data in the planner's own vocabulary (no
//     parser types), and each answers its command tag (Tag), what it takes
//     and returns (Shape: parameter types, result columns) and the tables
//     it reads (Reads), so a caller's one switch over plans is the one
//     that runs them. A new statement is a parser node, a plan type here
//     and a case in that switch. PREPARE is planned with its declared
//     types and must leave none unknown (42P18; an unknown result column
//     is text, as in Postgres); EXECUTE binds its arguments against the
//     prepared statement's shape, which Options.Prepared supplies.
//   - pg_catalog and information_schema tables (qualified, or an
//     unqualified pg_catalog name: pg_catalog is searched first) bind as
//     Values built by sql/pgcatalog from the catalog's tables (when it
//     implements TableLister) and Options.Database/User. Functions Postgres
//     answers from its catalogs (pg_table_is_visible, pg_get_userbyid,
//     current_database, current_user, ::regclass and the other OID alias
//     casts) expand into expressions over the same description. They are
//     the planner's own catalogFuncs (pgcatalog.go), not sql/functions
//     Defs: a call never reaches the evaluator, so there is no kernel to
//     share, and their answers come from the statement's catalog.
//   - BuildContext observes a context (57014). Binding counts its
//     recursion (54001 past limits.MaxDepth: nested queries, expressions,
//     joins, WITH queries naming WITH queries, stacked windows) and its
//     total work (54000 when WITH queries named repeatedly expand past a
//     bound); lists (IN, select lists, VALUES, UNION [ALL] chains) bind in
//     linear time and stay flat in the plan.
//   - Errors are *sqlerr.Error with the SQLSTATE Postgres uses (42P01,
//     42703, 42702, 42804, 42883, 42803, 42601, 0A000, 22023, ...) and the
//     1-based position from the parser wherever the AST has one.
//
// ExplainText renders the indented one-line-per-node tree EXPLAIN shows.
//
// # Example
//
//	st, _ := parser.ParseOne(`SELECT * FROM trades ASOF LEFT JOIN quotes
//	    ON ts BETWEEN INTERVAL '-10 seconds' AND INTERVAL '0 seconds' USING (sym)`)
//	p, err := planner.Build(cat, st, nil) // cat: *catalog.Catalog or a Snapshot
//	if err != nil { ... }                 // e.g. 0A000 if quotes is not ordered by ts
//	fmt.Print(planner.ExplainText(p))
//	// Project trades.sym, trades.ts, trades.price, trades.qty, quotes.bid, quotes.ask [ordering: trades.ts]
//	//   AsofJoin LEFT quotes on ts range [-00:00:10, 00:00:00] PREFER EARLIER keys (sym) [ordering: trades.ts]
//	//     Scan trades (ts, sym, price, qty) [ordering: trades.ts]
//	//     Scan quotes (ts, sym, bid, ask) [ordering: quotes.ts]
package planner
