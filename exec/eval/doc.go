// Package eval evaluates bound expressions (sql/expr trees) over whole
// Arrow record batches with PostgreSQL 15 semantics.
//
// Contract:
//   - Compile(e, schema, env) type-checks e against the input schema once;
//     Eval(ctx, batch) returns one array of batch.NumRows() values of
//     e.Type().Arrow(), owned by the caller. A bare column reference
//     returns the input array itself (retained), never a copy.
//   - Env carries the allocator for every output array, the statement time
//     returned by now(), and the session options (TimeZone: timestamptz
//     arithmetic, date_trunc/date_part and text casts happen on the
//     session zone's wall clock).
//   - NULL in, NULL out for operators and functions, except: AND/OR are
//     three-valued, IS [NOT] NULL and IS [NOT] DISTINCT FROM never return
//     NULL, IN returns NULL when nothing matches and a NULL was seen,
//     COALESCE/GREATEST/LEAST/concat skip NULLs.
//   - Evaluation is lazy where Postgres' is: the right side of AND/OR, CASE
//     arms and later COALESCE arguments are evaluated only for the rows
//     that need them, so `CASE WHEN x = 0 THEN 0 ELSE 1/x END` never
//     divides by zero. Errors are raised only for rows that are evaluated
//     and not NULL.
//   - Errors are *sqlerr.Error with Postgres' SQLSTATE and text: 22003
//     "integer out of range" / "smallint out of range" / "bigint out of
//     range" / "numeric field overflow" / "value out of range: overflow",
//     22012 "division by zero", 2201F/2201E for sqrt/power/ln domain
//     errors, 22008 for timestamps, 22023 for unknown date units, 22025 for
//     a LIKE pattern ending in an escape, 22P02 & co from the text codecs
//     on casts; at Compile 42883 for an unsupported operator/function
//     signature, 42804 for a type mismatch, 42846 for an impossible cast.
//
// Supported: + - * / % on int2/4/8 (checked, integer division truncates),
// float4/8 and numeric; unary minus; = <> < <= > >= on every type (NaN is
// the largest float and equals itself, text compares bytewise as in the C
// collation, intervals compare with 30-day months); AND, OR, NOT; IS [NOT]
// NULL; IS [NOT] DISTINCT FROM; IN lists; LIKE/ILIKE with `\` escapes;
// searched and simple CASE; casts between all sqltypes (numeric ones
// directly, the rest through Postgres' text I/O, which is how Postgres
// defines them); timestamp(tz) ± interval (months clamp to the month's end,
// days on the wall clock), date ± interval (a timestamp), timestamp −
// timestamp, interval ± interval, interval × / ÷ double precision (with
// Postgres' cascading of fractional months and days), date ± integer,
// date − date. BETWEEN is expected as two comparisons joined by AND (the
// planner's rewrite).
//
// Function calls (expr.Func) run the kernel of the functions.Def the
// planner bound them to (package sql/functions defines every scalar
// function once: its type rule and its kernel); the evaluator gives the
// kernel its arguments, lazily where Postgres is lazy (COALESCE), and the
// session settings. || runs the same kernel as concat(), strictly.
//
// Why typed loops rather than arrow-go compute kernels: the arithmetic
// kernels wrap on overflow (their _checked variants fail with Arrow's own
// errors, not Postgres' SQLSTATEs and messages, and division by zero on
// floats yields Inf instead of 22012), the comparison kernels do not order
// NaN as Postgres does, and the selection kernels (take/filter) failed on
// some of the Arrow types sqltypes stores in our tests. So arithmetic,
// comparison and selection are typed loops, written with package vec
// (which the function kernels share); Take, FilterBatch and forwards to
// vec's Gather and Comparator are exported for the operators. The results
// are plain Arrow arrays.
//
// Example: `price * 2 > 10` over a batch whose column 0 is float8:
//
//	e := &expr.Binary{Op: expr.Gt, T: sqltypes.BoolType,
//		L: &expr.Binary{Op: expr.Mul, T: sqltypes.Float8Type,
//			L: &expr.Column{Index: 0, Name: "price", T: sqltypes.Float8Type},
//			R: &expr.Literal{Value: 2.0, T: sqltypes.Float8Type}},
//		R: &expr.Literal{Value: 10.0, T: sqltypes.Float8Type}}
//	ev, err := eval.Compile(e, batch.Schema(), eval.Env{Mem: mem, Now: stmtStart})
//	mask, err := ev.Eval(ctx, batch) // *array.Boolean, caller releases
//	defer mask.Release()
package eval
