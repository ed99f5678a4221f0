// Package parser is asofsql's SQL front end: it turns Postgres-flavoured
// SQL with the ASOF JOIN clause into syntax trees the planner consumes.
//
// The grammar is TiDB's (github.com/pingcap/tidb/pkg/parser, used as a
// dependency, never forked). A Postgres-rules pre-pass sits in front of it:
//
//  1. lex the input by PostgreSQL's rules ('...' strings, E'...', $tag$...$tag$,
//     "identifiers", nested /* */ and -- comments, $n, numbers);
//  2. split it into statements at top-level semicolons;
//  3. handle the statements TiDB lacks ourselves (SHOW, SET, RESET, BEGIN..., COPY,
//     CREATE TABLE, EXPLAIN), and for the rest rewrite the Postgres-only
//     syntax into marker forms TiDB accepts, keeping an edit map;
//  4. parse with TiDB (mode ANSI_QUOTES | PIPES_AS_CONCAT |
//     NO_BACKSLASH_ESCAPES | IGNORE_SPACE) and resolve the markers back
//     into plain nodes plus typed side tables on the Statement.
//
// # API
//
//	stmts, err := parser.Parse(sql)  // zero or more statements; safe for concurrent use
//	st, err := parser.ParseOne(sql)  // at most one (extended-protocol Parse); "" gives (nil, nil)
//
// ParseContext and ParseOneContext observe a context (57014 once it is
// done). Any input is safe (see sql/limits and depth.go): every pass is
// linear in the statement's tokens (brackets are paired once at lex
// time), nesting past limits.MaxDepth is 54001 before anything recurses
// (a token-level bound before TiDB parses, the tree's depth right after),
// and a statement of more than limits.MaxTokens tokens is 54000.
//
// Each *Statement has Text/Start/End (its span in the input), and exactly
// one of AST (a TiDB ast.StmtNode) or Node (*ShowStmt, *SetStmt,
// *TransactionStmt, *SetTransactionStmt, *CopyStmt, *CreateTableStmt,
// *ExplainStmt, the prepared-statement forms of prepare.go and the cursor
// forms of cursors.go: *DeclareStmt, *FetchStmt for FETCH and MOVE,
// *CloseStmt; EXPLAIN, COPY (query), PREPARE and DECLARE wrap another
// *Statement). For AST statements:
//
//   - Params/NumParams: the i-th `?` of the rewritten SQL is $Params[i];
//     every ParamMarkerExpr already has Order = n-1 for its $n.
//   - Asof: one *AsofJoin per ASOF join anywhere in the statement
//     (subqueries, CTEs, UNION branches, nested joins); AsofOf(join) finds
//     the description of an *ast.Join. See AsofJoin for the fields per form.
//   - Casts: every remaining `#cast` marker call (see below) with its
//     sqltypes.Type.
//   - NullsFirst: ORDER BY items written with NULLS FIRST/LAST.
//   - DistinctOn: the expressions of each SELECT DISTINCT ON (...).
//   - EXTRACT(field FROM x) is the call ExtractFunc('field', x) (the
//     field as a string literal), since TiDB's grammar knows only MySQL's
//     units; the planner binds it as Postgres' numeric extract.
//   - Pos(expr) / PosOf(offset): AST positions (OriginTextPosition) are byte
//     offsets into the rewritten SQL; these map them to 1-based character
//     positions in the user's original text, as Postgres reports them.
//
// Errors are *sqlerr.Error with a SQLSTATE and Position (1-based
// characters in the whole input string). Syntax errors are 42601 with
// Postgres wording: `syntax error at or near "X"` (X is the user's token)
// or `syntax error at end of input`. Recognized but unsupported constructs
// are 0A000 naming them. Nothing panics, whatever the input (fuzzed).
//
// # How the planner sees Postgres forms
//
// Unquoted identifiers are lowercased (Postgres folding) before TiDB sees
// them, and quoted ones keep their case, so a name's .O is the Postgres
// name in every case; compare names with .O.
//
//   - Catalog forms (psql's queries; catalogforms.go): a ~ b and a !~ b,
//     also OPERATOR(pg_catalog.~) and OPERATOR(!~), become TiDB's
//     a [NOT] REGEXP b (*ast.PatternRegexpExpr; users cannot write REGEXP,
//     the word is quoted as a name); it binds like LIKE, looser than
//     Postgres' ~; ~* and !~* are the same with '(?i)' || before the
//     pattern (Postgres' embedded case-insensitive option); a prefix ~
//     stays 0A000. The LIKE operators
//     ~~, !~~, ~~* and !~~* (postgres_fdw's spelling) become [NOT]
//     [I]LIKE, and LIMIT/OFFSET n::bigint (any integer cast of a number
//     or parameter) drops the cast. COLLATE "C", "POSIX",
//     "default" and pg_catalog.default are dropped (asofsql compares text
//     bytewise, which is all of them); other collations stay 0A000.
//     x::regclass, ::regtype, ::regnamespace, ::regrole and ::oid become
//     the call `#regcast`(x, 'regclass') (MarkerRegCast), and the array of
//     x op ANY|SOME (array) becomes `#any`(array) (MarkerAny; ANY
//     (subquery) stays TiDB's); the planner resolves both.
//   - Arrays and functions in FROM: ARRAY(subquery) becomes
//     `#array`((subquery)) (MarkerArray), x::type[] `#arraycast`(x, 'type')
//     (MarkerArrayCast), x[i] `#subscript`(x, i) (MarkerSubscript), and
//     generate_series(...) [AS] s in FROM the derived table (SELECT
//     `#generate_series`(...) AS s) s (MarkerSeries). Other functions in
//     FROM, slices and ARRAY[...] are 0A000.
//   - x::type, CAST(x AS type) and typed literals (TIMESTAMP '...', DATE
//     '...', TIMESTAMPTZ '...', INTERVAL '5 seconds', and the other
//     supported type names directly followed by a string) become the call
//     `#cast`(x, 'canonical type name'). The
//     planner finds it as *ast.FuncCallExpr with FnName.O == "#cast" and
//     looks it up in Statement.Casts for the sqltypes.Type; Cast.Literal
//     says the operand is a literal (the whole is a constant). Supported
//     types: SMALLINT/INT2, INTEGER/INT/INT4, BIGINT/INT8, REAL/FLOAT4,
//     DOUBLE PRECISION/FLOAT8, NUMERIC[(p[,s])], TEXT, VARCHAR[(n)],
//     BOOLEAN, BYTEA, DATE, TIMESTAMP[(p)] [WITHOUT TIME ZONE], TIMESTAMPTZ
//     / TIMESTAMP[(p)] WITH TIME ZONE, INTERVAL. Others: 42704.
//   - TRUE and FALSE become `#cast`(TRUE, 'boolean'): TiDB's literal is
//     the integer 1 or 0 (flagged boolean only in its FieldType), the cast
//     makes the Postgres type explicit. IS [NOT] TRUE|FALSE stay TiDB's
//     IsTruthExpr.
//   - a IS NOT DISTINCT FROM b becomes a <=> b (opcode.NullEQ); a IS
//     DISTINCT FROM b becomes NOT (a <=> b) (a UnaryOperationExpr with
//     opcode.Not around it). Users cannot write <=> themselves. It binds
//     like = (TiDB's precedence), so `a IS DISTINCT FROM b = c` groups as
//     (a IS DISTINCT FROM b) = c; Postgres would group the right side.
//     Parenthesize when mixing it with comparisons.
//   - ORDER BY x NULLS FIRST|LAST: the item is a normal ByItem; the choice
//     is in Statement.NullsFirst.
//   - SELECT DISTINCT ON (a, b) x: the SelectStmt has Distinct false and
//     only its own fields; a and b are in Statement.DistinctOn. It rides
//     on a `#distinct_on`(a, b) first field that recovery removes.
//   - LIMIT ALL, and OFFSET without LIMIT, give Limit.Count = NoLimit
//     (the uint64 maximum), which means no limit. OFFSET n [ROWS] LIMIT m
//     is accepted in either order.
//   - Words TiDB reserves but Postgres does not (key, index, rank, read,
//     div, mod, xor, regexp, ...) are quoted for TiDB when used as names,
//     so they work as names and never act as MySQL operators; followed by
//     "(" they stay function names (rank() OVER ..., replace(...)).
//   - first(...) and last(...) (TiDB keywords) are quoted for TiDB and
//     arrive as ordinary FuncCallExprs.
//   - An aggregate call with ORDER BY, f(args ORDER BY keys), arrives as
//     an *ast.AggregateFuncExpr with F = f (as written, lowercased), its
//     Args and Order (NULLS FIRST/LAST in Statement.NullsFirst as usual).
//     Internally it rides on TiDB's group_concat, the one aggregate TiDB
//     gives an ORDER BY, with a `#agg`('f') marker; SEPARATOR is refused.
//   - f(args) FILTER (WHERE cond) arrives as an *ast.AggregateFuncExpr of f
//     as above, with cond in Statement.Filters (it rides on group_concat
//     with a `#filter`(cond) marker argument, or last ORDER BY key).
//   - Window frames: an offset other than a bare number, `expr PRECEDING`
//     (INTERVAL '5 minutes', -1, $1, ...), arrives as TiDB's FrameBound
//     with Expr = expr and Unit = FrameOffsetUnit (it rides on TiDB's
//     INTERVAL expr unit form). EXCLUDE CURRENT ROW | GROUP | TIES, which
//     TiDB lacks, is in Statement.FrameExclude per *ast.FrameClause
//     (EXCLUDE NO OTHERS is the default and recorded nowhere); it rides on
//     a `#frame_exclude`(n) first PARTITION BY item that recovery removes.
//   - VALUES (...), (...) as a query (a statement, a FROM item, a UNION
//     branch, a CTE body) arrives as a SelectStmt of Kind
//     SelectStmtKindValues (rewritten to TiDB's VALUES ROW(...)).
//   - A derived table's column alias list, (query) [AS] v(a, b), arrives
//     as TableSource.ColumnNames with Lateral false (internally it rides on
//     TiDB's LATERAL ... AS v(a, b) with a marked alias).
//   - TiDB renames some calls (stddev and std become stddev_pop, variance
//     var_pop); Statement.SourceName(call) returns the name the user wrote.
//   - E'...' and $$...$$ strings arrive as ordinary string literals with
//     their decoded value; '...' keeps backslashes (standard strings).
//   - 'a' || 'b' is CONCAT (PIPES_AS_CONCAT).
//   - j -> k and j ->> k are (j | `#json_get`()) | k and (j |
//     `#json_get_text`()) | k (MarkerJSONGet, MarkerJSONGetText): TiDB's
//     bitwise or is left-associative, looser than + - * / and tighter than
//     comparisons, which is where Postgres puts ->. The planner binds the
//     pattern as the json accessor functions. #> and #>> stay 0A000.
//   - x AT TIME ZONE z is `#at_time_zone`(x, z) (MarkerAtTimeZone): x is
//     the primary expression before AT (with its casts), z one primary
//     after ZONE (a zone with a cast or subscript must be parenthesized:
//     0A000). The planner binds it as timezone(z, x).
//   - A named argument, f(a, name => x) or the old f(a, name := x), is the
//     argument `#named`('name', x) (MarkerNamed); the planner puts it in
//     place. A name given twice or a positional argument after a named
//     one is 42601 as in Postgres; => or := anywhere else is 42601.
//
// # ASOF JOIN
//
// All spellings of spec §1: `[INNER | LEFT [OUTER] | RIGHT [OUTER] | FULL
// [OUTER] | SEMI | ANTI]` with the range form
// `ON t BETWEEN lo AND hi [AND right-only ...] [USING (k, ...)]`, the
// inequality form `ON l.k = r.k ... AND l.t >= r.t` (any of >= > <= <,
// either operand order), the range-on-expression form `ON ... AND r.ts
// BETWEEN l.t + lo AND l.t + hi` (also `l.t - c` and bare `l.t`), and
// `USING (k..., t)`; each optionally followed by PREFER EARLIER|LATER.
// The join reaches the planner as an ordinary *ast.Join (Tp CrossJoin for
// INNER, RIGHT, FULL, SEMI and ANTI, LeftJoin for LEFT) whose On holds the user's
// condition and Using the USING columns, plus its AsofJoin description
// (whose Kind tells the others apart).
//
// Internally ASOF (and RIGHT/FULL [OUTER], SEMI or ANTI after it) is
// dropped, ON becomes "ON `#asof`(n) OR", USING (...)
// becomes "OR `#asof_using`(n, ...)", MATCH_CONDITION (c) becomes
// "ON `#asof`(n) OR `#asof_match`(n, c)" (an ON after it "OR"),
// PREFER is dropped and recorded. OR
// is TiDB's lowest-precedence operator, so the markers sit at the edges of
// the OR spine and removing them leaves exactly the tree of the user's
// condition. Markers are unforgeable: the lexer refuses backticks and
// quoted identifiers starting with "#". A marker that survives would be
// an unknown function (loud), and recovery checks every planted marker
// was found.
//
// ASOF is a keyword only directly before [INNER | LEFT [OUTER] | RIGHT
// [OUTER] | FULL [OUTER] | SEMI | ANTI] JOIN and
// not right after FROM, JOIN, AS, "," or "(": a table, column or alias
// named asof keeps working (an alias written right before JOIN must be
// quoted or introduced with AS). The word inside strings and comments is
// never touched.
//
// What the parser checks (no catalog needed), all 42601 positioned:
// ASOF JOIN without ON, USING or MATCH_CONDITION (at ASOF); an ON form
// without an inequality or BETWEEN of two columns (at ASOF); a
// MATCH_CONDITION that is not one inequality of two columns; range-form
// bounds that are not constants, i.e. reference a column, subquery,
// aggregate or window function (at the bound; parameters count as
// constants); a qualified column in the range form (t must name the column
// of both inputs); range-on-expression bounds offsetting different columns;
// USING combined with a non-range ON condition; USING entries that are not
// plain column names; PREFER without EARLIER/LATER. Which inequality is the
// time condition (the one comparing a column of each input, spec §2.5) and
// which equalities are keys is the planner's call: the parser lists the
// candidates (AsofJoin.Cands, Keys).
//
// What the planner checks: that t and the keys resolve in both inputs
// (42703/42702); which side each operand of an inequality or key pair
// belongs to; bound types against t's type (42804, with the INTERVAL
// hint); lo > hi on folded constants (22023 at LoPos); that Extra
// conditions reference only the right input or no input (0A000); the
// ordering requirements of spec §4.
//
// # Our statements
//
//   - SHOW name | ALL | TIME ZONE | TRANSACTION ISOLATION LEVEL.
//   - RESET name | TIME ZONE | ALL (a SetStmt with Reset and Default).
//   - SET [SESSION | LOCAL] name {TO | =} value [, ...] | DEFAULT;
//     SET TIME ZONE value | LOCAL | DEFAULT; SET NAMES value. (SET
//     TRANSACTION, SET ROLE: 0A000.)
//   - BEGIN [WORK | TRANSACTION] [modes], START TRANSACTION [modes],
//     COMMIT | END [WORK | TRANSACTION], ROLLBACK | ABORT [...]; modes are
//     ISOLATION LEVEL ..., READ ONLY | WRITE, [NOT] DEFERRABLE.
//   - COPY table [(cols)] FROM {STDIN | 'path'} and COPY {table [(cols)] |
//     (query)} TO {STDOUT | 'path'}, options [WITH] (FORMAT text|csv|binary|
//     parquet, HEADER [bool], DELIMITER 'c', NULL 's') or the old bare
//     spelling (CSV HEADER DELIMITER 'c' ...). Bad values are 22023, unknown
//     or repeated options 42601, Postgres options asofsql lacks (QUOTE,
//     ESCAPE, FORCE_*, ENCODING, FREEZE, HEADER MATCH, PROGRAM) 0A000.
//   - CREATE [TEMP] TABLE [IF NOT EXISTS] name (col type [NOT NULL | NULL |
//     PRIMARY KEY] ..., [CONSTRAINT c] PRIMARY KEY (cols)) [ORDER BY
//     ([col, ...])]: exact sqltypes.Type per column (BOOLEAN stays BOOLEAN),
//     NOT NULL flags, and the declared ascending ordering, checked against
//     the column list (42703). DEFAULT, UNIQUE, CHECK, REFERENCES,
//     GENERATED, COLLATE, WITH (...), AS query, UNLOGGED: 0A000.
//   - EXPLAIN [ANALYZE] [VERBOSE] stmt and EXPLAIN (ANALYZE [bool], VERBOSE
//     [bool], COSTS ..., FORMAT TEXT) stmt, for SELECT/WITH/VALUES/TABLE/
//     INSERT/UPDATE/DELETE/EXECUTE.
//   - PREPARE name [(type, ...)] AS stmt, for what Postgres prepares
//     (SELECT/WITH/VALUES/TABLE/"("/INSERT/UPDATE/DELETE/MERGE; anything
//     else is 42601 at its first word); the inner statement's $n are its
//     own. EXECUTE name [(expr, ...)]: the arguments are parsed as the
//     select list of a SELECT (ExecuteStmt.Args), a FROM, alias or * among
//     them being 42601 where Postgres' grammar puts it. DEALLOCATE
//     [PREPARE] {name | ALL}; DISCARD {ALL | PLANS | SEQUENCES | TEMP |
//     TEMPORARY}.
//
// Everything starting with SELECT, WITH, INSERT, UPDATE, DELETE, VALUES,
// TABLE, DROP, other CREATE forms or "(" goes to TiDB. Other Postgres
// statements (VACUUM, LISTEN, DECLARE, TRUNCATE, ...) are 0A000;
// anything else is a syntax error at its first word.
//
// # Rejected, and why
//
//   - Operators whose meaning differs in TiDB or that asofsql lacks: #, ~
//     and regex operators, &&, @, <=>, ?, array subscripts: 0A000 or
//     42601, never a silent reinterpretation. Allowed: + - * / % < > = <=
//     >= <> != || & | << >> and ^ (TiDB's XOR node, which has Postgres'
//     precedence for ^; the planner binds it as exponentiation).
//
//   - Backticks (MySQL quoting) and quoted names starting with "#"
//     (reserved for markers): 42601 / 42602.
//
//   - B'..', X'..', U&'..' literals; INTERVAL '1' DAY field qualifiers;
//     MySQL's INTERVAL 1 SECOND; array types: 0A000 or 42601.
//
//   - Numbers with trailing identifier characters (123abc, 0x1F, 1_000):
//     42601, as in PostgreSQL 15+.
//
//   - $0 and $n above 65535: 42P02. NUL bytes in E'...' escapes: 22021.
//
//   - a ASOF JOIN b JOIN c ON ... ON ...: the right side of an ASOF join
//     must be a single table, a subquery or a parenthesized join.
//
//   - Postgres constructs TiDB's grammar cannot express are named with
//     0A000 at their first word: FULL JOIN (but ASOF FULL JOIN is the ASOF
//     kind), FILTER (WHERE) on first()/last() or in a window function,
//     ARRAY[...] constructors, RETURNING, ON CONFLICT, AT TIME
//     ZONE, SIMILAR TO, COLLATE.
//
//   - GROUPING SETS, ROLLUP, CUBE and () in GROUP BY become marker calls
//     (groupingforms.go) the planner expands into grouping sets.
//
//   - ASOF CROSS|NATURAL JOIN: 0A000. By the keyword rule this
//     asof would be an alias, but taking it as one would silently turn an
//     intended ASOF join into a plain join; quote "asof" for the alias.
//
//   - _name 'string' (a MySQL charset introducer): 42704, as Postgres
//     reads it as a literal of type _name.
//
// Known gaps: other forms TiDB's grammar lacks (a column alias list on a
// plain table, EXISTS (...)::type, a column
// named interval, ...) fail with a 42601 syntax error positioned at the
// user's token. After a successful parse, TiDB-specific syntax the pre-pass
// lets through (FOR UPDATE, LATERAL, TABLESAMPLE, MySQL functions) reaches
// the planner, which rejects what it does not run.
//
// # Example
//
//	stmts, err := parser.Parse(`SELECT * FROM trades ASOF LEFT JOIN quotes
//	    ON ts BETWEEN INTERVAL '-5 seconds' AND INTERVAL '0 seconds' USING (sym)`)
//	if err != nil { ... }              // *sqlerr.Error, 42601 with Position
//	a := stmts[0].Asof[0]
//	// a.Kind == parser.AsofLeft, a.Form == parser.FormRange,
//	// a.On.Name.O == "ts", a.Using[0].Name.O == "sym",
//	// a.Lo is the `#cast`('-5 seconds', 'interval') call, whose
//	// stmts[0].Casts entry has Type sqltypes.IntervalType and Literal true.
package parser
