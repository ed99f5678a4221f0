// Package functions defines asofsql's scalar SQL functions, each once: its
// names, the type rule the planner applies to a call, and the kernel the
// evaluator runs. The planner (sql/planner) and the evaluator (exec/eval)
// both read the same Def, so they cannot disagree about which functions
// exist or what their arguments are; the package imports neither (the
// planner must not import the executor), only sql/expr, sqltypes, vec and
// Arrow.
//
// # Contract
//
//   - A function is one *Def, declared as a package variable with
//     register, so the registry is complete once the package is
//     initialised and never changes afterwards. Lookup finds a Def by
//     name or alias; All lists them.
//   - The planner resolves a call to a Def (Lookup, then the Def's Rule
//     through a Binder that positions errors at the call's arguments) and
//     stores the Def in the bound expr.Func. The evaluator takes the Def
//     from there (Of) and builds the kernel with Def.Compile: nothing
//     matches names after binding. Operators and syntax the planner
//     implements with a function (x ~ p is TextRegexEq, arr[i] is
//     ArraySubscript) build calls of Internal Defs directly.
//   - Semantics, SQLSTATEs and messages are PostgreSQL 15's: a call no
//     overload takes is 42883 "function f(types) does not exist" at plan
//     time; run-time errors (22012, 2201E, 22011, ...) come from the
//     kernel for the rows that reach it. Kernels are strict (NULL in, NULL
//     out) unless documented otherwise (coalesce, concat, ...).
//   - A kernel gets its arguments from Input, evaluated over the whole
//     batch (Arg) or, where Postgres evaluates lazily, over some rows only
//     (ArgWhere); it returns a new array the caller owns, allocated from
//     Input.Mem.
//   - Every Def has Examples; the root package's TestFunctionExamples runs
//     each through the engine and checks EXPLAIN shows the Def called.
//
// # Adding a function
//
// Everything about a function lives in its declaration; nothing else in
// the planner or the evaluator changes. Put it in the file of its family
// (strings.go, math.go, datetime.go, pgcatalog.go, arrays.go,
// conditional.go) or a new file, and give it:
//
//  1. Name (lower case, as Postgres spells it), Aliases if SQL has other
//     spellings, MinArgs/MaxArgs.
//  2. Rule: fixed(result, params...) for one signature (untyped literals
//     are read as the parameter type, anything else that does not coerce
//     is 42883); a hand-written Rule for overloads, choosing the signature
//     from the argument types and coercing through the Binder (see
//     roundRule, DateTrunc). Mark Volatile a function whose value changes
//     per call.
//  3. Prepare: the kernel for the types the Rule produced, errTypes for
//     any other. Row-by-row functions use strict1/strict2/strict3 over Go
//     values (string, int32, int64, float64, bool, ...), or mapText for
//     text to text, and prepareIf to check the argument kinds; functions
//     that need the session (time zone, now()) or lazy arguments write a
//     Kernel over Input; hot ones run typed loops with package vec
//     (floatMap, dateTrunc).
//  4. Examples, each checked against a real PostgreSQL 15 (psql prints
//     what Want holds), and the function in docs/sql.md's list;
//     TestFunctionExamples fails without either.
//
// For instance, Postgres' reverse(text) would be, in strings.go:
//
//	// Reverse is reverse(text): the characters in reverse order.
//	var Reverse = register(&Def{
//		Name: "reverse", MinArgs: 1, MaxArgs: 1,
//		Rule: fixed(text, text),
//		Prepare: prepareIf(func([]expr.Expr, sqltypes.Type) Kernel {
//			return mapText(func(s string) string {
//				r := []rune(s)
//				slices.Reverse(r)
//				return string(r)
//			})
//		}, stringKind, stringKind),
//		Examples: []Example{{"reverse('abc')", "cba"}, {"reverse(NULL)", "NULL"}},
//	})
//
// # What is not here
//
// Only scalar functions with a kernel are Defs. Aggregates (count, sum,
// avg, min, max, bool_and/bool_or/every, string_agg, stddev/variance and
// their variants, first/last, json_agg/jsonb_agg/json_object_agg, which
// write values with AppendJSON) are typed by the planner (aggFuncs and
// aggType in bind_expr.go, bind_agg.go) and run by exec's aggregate
// operators (exec/aggfuncs.go); window functions (row_number, rank,
// dense_rank, first_value, last_value, lag, lead and the aggregates over
// a window) by sql/planner/window.go and exec/window.go. Both pairs still
// agree by name: adding an aggregate touches the planner and exec. The
// set-returning generate_series, unnest and regexp_matches (RegexpMatches
// gives its rows) in FROM are plan nodes
// (sql/planner/series.go), and the functions Postgres answers from its
// catalogs (pg_table_size, pg_get_userbyid, current_database, ...) are
// expanded by the planner into expressions over the statement's catalog
// (sql/planner/pgcatalog.go): no call of theirs reaches the evaluator. A
// planner test (TestPlannerFunctionsAreNotDefs) keeps those names apart from
// the Defs'.
//
// Named arguments (make_interval(days => 1)) never reach a Rule: a Def
// whose Postgres parameters have names lists them in Params (and the
// defaults of its optional ones in Defaults), and the planner puts each
// named argument in its place first, so the Rule sees a positional call.
package functions
