package planner

import (
	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sql/functions"
	"github.com/asofsql/asofsql/sql/limits"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sql/pgcatalog"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Catalog is what the planner reads of the catalog: table definitions.
// *catalog.Catalog and *catalog.Snapshot implement it.
type Catalog interface {
	Table(name string) (*catalog.TableInfo, error)
}

var (
	_ Catalog = (*catalog.Catalog)(nil)
	_ Catalog = (*catalog.Snapshot)(nil)
)

// Options are the session facts planning depends on.
type Options struct {
	// Types carries the session settings typed literals are read with
	// (TimeZone for TIMESTAMPTZ '...'); nil means UTC.
	Types *sqltypes.Options
	// ParamTypes are the parameter types the client declared ($1 first;
	// Unknown or missing entries are inferred).
	ParamTypes []sqltypes.Type
	// Database and User are what the virtual pg_catalog tables and
	// current_database()/current_user show (DefaultDatabase and
	// DefaultUser when empty).
	Database, User string
	// SettingName spells a run-time setting's name as SHOW's result
	// column does ("timezone" → "TimeZone"); nil keeps it as written.
	SettingName func(name string) string
	// Prepared looks up a statement prepared in the session (PREPARE, or
	// the wire protocol's Parse of a named statement) for EXECUTE; nil
	// when there are none.
	Prepared func(name string) (*Prepared, bool)
	// Workers is the degree of parallelism queries are planned for
	// (max_parallel_workers_per_gather); 0 and 1 give serial plans.
	// It is the most a gather gets: see MinParallelBytes.
	Workers int
	// MinParallelBytes is min_parallel_table_scan_size in bytes: a gather
	// whose largest scanned input is smaller stays serial, larger ones get
	// more workers, up to Workers (parallel_degree.go). 0 gives every
	// gather Workers.
	MinParallelBytes int64
	// Cursor looks up a cursor declared in the session (DECLARE) for
	// FETCH: its columns, and whether it is BINARY; nil when there are
	// none.
	Cursor func(name string) (cols []Column, binary, ok bool)
}

// binder holds the state of planning one statement.
type binder struct {
	cat    Catalog
	st     *parser.Statement
	opts   *Options
	params []sqltypes.Type
	pgsrc  *pgcatalog.Source // built on first use (pgcatalog.go)
	// env is the WITH clauses of the query level being bound (what a
	// subquery in an expression sees).
	env *cteEnv
	// outer is the enclosing query level while a subquery is bound.
	outer *outerScope
	// nsub counts the statement's subquery expressions.
	nsub int
	// viewDepth counts the views being expanded around this binder.
	viewDepth int
	// depth bounds the recursion of binding (bindQuery, bindResultSet,
	// bindExpr); steps counts their calls, against maxBindSteps, and tick
	// checks the context now and then (guard).
	depth limits.Depth
	steps int
	tick  *limits.Ticker
	// recursing maps the WITH RECURSIVE queries whose recursive term is
	// being bound to their working table; nrec numbers them (recursive.go).
	recursing map[*cteEnv]*recursion
	nrec      int
}

// maxBindSteps bounds the work of binding one statement. Binding is linear
// in the statement's size except where WITH queries are named more than
// once: each reference binds the query again (plans are trees), so a
// chain of CTEs each naming the previous one twice doubles at every step.
const maxBindSteps = 4 * limits.MaxTokens

// guard is called on entering each recursive binding step: it refuses to
// go deeper than limits.MaxDepth (54001), to do more than maxBindSteps
// steps (54000) and to go on once the context is done (57014). The caller
// defers b.depth.Leave() when it succeeds.
func (b *binder) guard() error {
	if err := b.tick.Tick(); err != nil {
		return err
	}
	if b.steps++; b.steps > maxBindSteps {
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "statement is too complex: it expands to more than %d expressions", maxBindSteps).
			WithHint("A WITH query is planned again each time it is named; name it fewer times, or store it in a table.")
	}
	return b.depth.Enter()
}

// inputDesc says what a FROM item is, for ordering errors and hints.
type inputDesc struct {
	// kind is "table", "view", "subquery" or "join".
	kind string
	// name is the table name or alias ("" for a join).
	name string
	// table is the underlying table name of a table input.
	table string
}

func (d inputDesc) String() string {
	switch d.kind {
	case "table":
		if d.name != d.table {
			return "table \"" + d.table + "\" (as \"" + d.name + "\")"
		}
		return "table \"" + d.name + "\""
	case "view":
		if d.name != d.table {
			return "view \"" + d.table + "\" (as \"" + d.name + "\")"
		}
		return "view \"" + d.name + "\""
	case "subquery":
		return "subquery \"" + d.name + "\""
	}
	return "(join " + d.name + ")"
}

// rel is a bound FROM item: its plan and the names it makes visible.
type rel struct {
	node Node
	sc   *scope
	desc inputDesc
}

// cteEnv is the WITH clauses in scope, innermost first: one entry per
// WITH query, seeing the entries of its clause up to itself (pos) and
// then the clause's enclosing env.
type cteEnv struct {
	clause *withClause
	pos    int
	name   string
	cte    *ast.CommonTableExpression
	// env is where the CTE's own query is bound (earlier CTEs only).
	env *cteEnv
	// outer is the enclosing query levels where the WITH clause stands
	// (what the CTE's own query may refer to).
	outer *outerScope
}

// withClause indexes one WITH clause's queries by name, so a lookup costs
// one map probe per enclosing WITH clause however many queries each has.
type withClause struct {
	byName map[string]*cteEnv
	parent *cteEnv // the env the WITH clause stands in
}

func (e *cteEnv) find(name string) *cteEnv {
	for e != nil {
		if c := e.clause.byName[name]; c != nil && c.pos <= e.pos {
			return c
		}
		e = e.clause.parent
	}
	return nil
}

func (b *binder) finishParams() []sqltypes.Type {
	out := make([]sqltypes.Type, b.st.NumParams)
	copy(out, b.params)
	return out
}

// bindResultSet binds a FROM item.
func (b *binder) bindResultSet(n ast.ResultSetNode, env *cteEnv) (*rel, error) {
	if err := b.guard(); err != nil {
		return nil, err
	}
	defer b.depth.Leave()
	switch x := n.(type) {
	case *ast.TableSource:
		return b.bindTableSource(x, env)
	case *ast.Join:
		return b.bindJoin(x, env)
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "FROM item %T is not supported", n)
}

func (b *binder) bindTableSource(ts *ast.TableSource, env *cteEnv) (*rel, error) {
	alias := ts.AsName.O
	var r *rel
	switch src := ts.Source.(type) {
	case *ast.TableName:
		if isVirtualTable(src.Schema.O, src.Name.O) && (src.Schema.O != "" || env.find(src.Name.O) == nil) {
			if alias == "" {
				alias = src.Name.O
			}
			var err error
			if r, err = b.bindVirtual(src.Schema.O, src.Name.O, alias); err != nil {
				return nil, err
			}
			break
		}
		if src.TableSample != nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "TABLESAMPLE is not supported")
		}
		name := src.Name.O
		if alias == "" {
			alias = name
		}
		if c := env.find(name); c != nil && src.Schema.O == "" {
			node, err := b.bindCTE(c)
			if err != nil {
				return nil, err
			}
			requalify(node, alias)
			r = &rel{node: node, sc: newScope(alias, node.Schema()), desc: inputDesc{kind: "subquery", name: alias}}
			break
		}
		rl, err := b.relation(src.Schema.O, name)
		if err != nil {
			if e, ok := sqlerr.As(err); ok && e.Code == sqlerr.UndefinedTable && e.Position == 0 {
				if p := b.tablePos(src); p > 0 {
					return nil, e.WithPosition(p)
				}
			}
			return nil, err
		}
		if rl.View != nil {
			node, err := b.bindView(rl.View, alias) // relation.go
			if err != nil {
				return nil, err
			}
			r = &rel{node: node, sc: newScope(alias, node.Schema()), desc: inputDesc{kind: "view", name: alias, table: name}}
			break
		}
		info := rl.Table
		s := &Scan{Table: info, Alias: alias}
		for i, c := range info.Columns {
			s.Columns = append(s.Columns, i)
			s.cols = append(s.cols, Column{Name: c.Name, Table: alias, Type: c.Type, Nullable: !c.NotNull})
		}
		r = &rel{node: s, sc: newScope(alias, s.cols), desc: inputDesc{kind: "table", name: alias, table: name}}
	case *ast.SelectStmt, *ast.SetOprStmt:
		if alias == "" {
			return nil, sqlerr.New(sqlerr.SyntaxError, "subquery in FROM must have an alias").
				WithHint("For example, FROM (SELECT ...) [AS] foo.")
		}
		node, err := b.bindQuery(src, env)
		if err != nil {
			return nil, err
		}
		requalify(node, alias)
		r = &rel{node: node, sc: newScope(alias, node.Schema()), desc: inputDesc{kind: "subquery", name: alias}}
	case *ast.Join:
		inner, err := b.bindJoin(src, env)
		if err != nil {
			return nil, err
		}
		if alias != "" {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "an alias on a parenthesized join is not supported")
		}
		r = inner
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "FROM item %T is not supported", ts.Source)
	}
	if len(ts.ColumnNames) > 0 {
		if len(ts.ColumnNames) > len(r.sc.star) {
			return nil, sqlerr.New(sqlerr.InvalidColumnReference, "table \"%s\" has %d columns available but %d columns specified", alias, len(r.sc.star), len(ts.ColumnNames))
		}
		for i, cn := range ts.ColumnNames {
			r.sc.cols[r.sc.star[i]].name = cn.O
		}
	}
	return r, nil
}

// bindCTE binds a WITH query where it is referenced; each reference gets
// its own subtree (plans are trees, not DAGs).
func (b *binder) bindCTE(c *cteEnv) (Node, error) {
	if r := b.recursing[c]; r != nil {
		return &WorkTable{Name: r.name, ID: r.id, cols: append([]Column(nil), r.cols...)}, nil
	}
	if c.cte.IsRecursive && refersTo(c.cte.Query.Query, c.name) {
		return b.bindRecursive(c) // recursive.go
	}
	saved := b.outer
	b.outer = c.outer
	node, err := b.bindQuery(c.cte.Query.Query, c.env)
	b.outer = saved
	if err != nil {
		return nil, err
	}
	if len(c.cte.ColNameList) > 0 {
		cols := node.Schema()
		if len(c.cte.ColNameList) > len(cols) {
			return nil, sqlerr.New(sqlerr.InvalidColumnReference, "WITH query \"%s\" has %d columns available but %d columns specified", c.name, len(cols), len(c.cte.ColNameList))
		}
		return renameCols(node, func(i int) string {
			if i < len(c.cte.ColNameList) {
				return c.cte.ColNameList[i].O
			}
			return cols[i].Name
		}), nil
	}
	return node, nil
}

// renameCols wraps node in a Project that renames its columns.
func renameCols(node Node, name func(int) string) Node {
	cols := node.Schema()
	p := &Project{Input: node}
	for i, c := range cols {
		p.Exprs = append(p.Exprs, &expr.Column{Index: i, Name: c.Name, T: c.Type})
		c.Name = name(i)
		p.Cols = append(p.Cols, c)
	}
	return p
}

// withEnv adds a WITH clause to env.
func (b *binder) withEnv(w *ast.WithClause, env *cteEnv) (*cteEnv, error) {
	if w == nil {
		return env, nil
	}
	wc := &withClause{byName: map[string]*cteEnv{}, parent: env}
	for i, c := range w.CTEs {
		if wc.byName[c.Name.O] != nil {
			return nil, sqlerr.New("42712", "WITH query name \"%s\" specified more than once", c.Name.O)
		}
		env = &cteEnv{clause: wc, pos: i, name: c.Name.O, cte: c, env: env, outer: b.outer}
		wc.byName[c.Name.O] = env
	}
	return env, nil
}

// concatScopes is the scope of a join: left names, then right names
// shifted past the left columns.
func concatScopes(l, r *scope, lw int) *scope {
	s := &scope{}
	s.cols = append(s.cols, l.cols...)
	s.star = append(s.star, l.star...)
	for _, c := range r.cols {
		c.idx += lw
		s.cols = append(s.cols, c)
	}
	for _, i := range r.star {
		s.star = append(s.star, i+len(l.cols))
	}
	return s
}

// joinCols is a join's output: left columns, then right ones (nullable
// when the join is LEFT).
func joinCols(l, r []Column, rightNullable bool) []Column {
	if rightNullable {
		return joinColsOf(l, r, JoinLeft)
	}
	return joinColsOf(l, r, JoinInner)
}

// joinColsOf is the output columns of an ordinary join of kind.
func joinColsOf(l, r []Column, kind JoinKind) []Column {
	var out []Column
	for _, c := range l {
		if kind.leftNullable() {
			c.Nullable = true
		}
		out = append(out, c)
	}
	for _, c := range r {
		if kind.rightNullable() {
			c.Nullable = true
		}
		out = append(out, c)
	}
	return out
}

func (b *binder) bindJoin(j *ast.Join, env *cteEnv) (*rel, error) {
	if j.Right == nil {
		return b.bindResultSet(j.Left, env)
	}
	l, err := b.bindResultSet(j.Left, env)
	if err != nil {
		return nil, err
	}
	kind := JoinInner
	switch j.Tp {
	case ast.LeftJoin:
		kind = JoinLeft
	case ast.RightJoin:
		kind = JoinRight
	}
	if b.st.FullJoins[j] {
		kind = JoinFull
	}
	r, lat, err := b.bindJoinRight(j.Right, l, kind, env) // lateral.go
	if err != nil {
		return nil, err
	}
	// One FROM clause cannot name a table (or alias) twice: qualified
	// columns would be ambiguous. Postgres: 42712.
	for _, c := range r.sc.cols {
		if c.table != "" && l.sc.hasTable(c.table) {
			return nil, sqlerr.New("42712", "table name \"%s\" specified more than once", c.table)
		}
	}
	if a := b.st.AsofOf(j); a != nil {
		if len(lat.args) > 0 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a LATERAL item in an ASOF JOIN is not supported")
		}
		return b.bindAsof(a, l, r)
	}
	if j.NaturalJoin {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "NATURAL JOIN is not supported").WithHint("Use JOIN ... USING (...).")
	}
	if j.StraightJoin {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "STRAIGHT_JOIN is not supported")
	}
	lw := len(l.node.Schema())
	join := &Join{Left: l.node, Right: r.node, Kind: kind, cols: joinColsOf(l.node.Schema(), r.node.Schema(), kind)}
	sc := concatScopes(l.sc, r.sc, lw)
	out := &rel{node: join, sc: sc, desc: inputDesc{kind: "join", name: "of " + l.desc.label() + " and " + r.desc.label()}}
	if len(lat.args) > 0 {
		if err := b.lateralJoin(j, l, r, lat, kind, sc, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	switch {
	case len(j.Using) > 0 && kind == JoinFull:
		if err := b.bindFullUsing(j.Using, l, r, lw, join, out); err != nil {
			return nil, err
		}
	case len(j.Using) > 0:
		if err := b.bindUsing(j.Using, l, r, lw, join, out); err != nil {
			return nil, err
		}
	case j.On != nil:
		cond, err := b.bindExpr(j.On.Expr, &exprCtx{sc: sc, clause: "JOIN conditions"})
		if err != nil {
			return nil, err
		}
		if cond, err = b.coerce(cond, sqltypes.BoolType, j.On.Expr, "argument of JOIN/ON"); err != nil {
			return nil, err
		}
		var rest []expr.Expr
		for _, c := range expr.Conjuncts(cond) {
			if lk, rk, ok := equiPair(c, lw); ok {
				join.LeftKeys = append(join.LeftKeys, lk)
				join.RightKeys = append(join.RightKeys, rk-lw)
				continue
			}
			rest = append(rest, c)
		}
		join.Residual = expr.AndAll(rest...)
	default:
		if kind != JoinInner {
			return nil, sqlerr.New(sqlerr.SyntaxError, "%s JOIN requires an ON or USING condition", kind)
		}
		join.Kind = JoinCross
	}
	return out, nil
}

func (d inputDesc) label() string {
	if d.kind == "join" {
		return "(join " + d.name + ")"
	}
	return d.name
}

// equiPair recognizes left.col = right.col of one type (a hash key).
func equiPair(e expr.Expr, lw int) (int, int, bool) {
	bin, ok := e.(*expr.Binary)
	if !ok || bin.Op != expr.Eq {
		return 0, 0, false
	}
	l, lok := bin.L.(*expr.Column)
	r, rok := bin.R.(*expr.Column)
	if !lok || !rok {
		return 0, 0, false
	}
	if l.Index >= lw && r.Index < lw {
		l, r = r, l
	}
	if l.Index < lw && r.Index >= lw && l.T.Kind == r.T.Kind {
		return l.Index, r.Index, true
	}
	return 0, 0, false
}

// bindUsing makes a USING join's keys and merges each key into one
// visible column (the left one; the right copy stays addressable by its
// qualifier), listed first in SELECT *.
func (b *binder) bindUsing(using []*ast.ColumnName, l, r *rel, lw int, join *Join, out *rel) error {
	var lcols, rcols []scopeCol
	for _, u := range using {
		lc, err := l.sc.lookup("", u.Name.O, 0)
		if err != nil {
			return usingError(err, u.Name.O, "left")
		}
		rc, err := r.sc.lookup("", u.Name.O, 0)
		if err != nil {
			return usingError(err, u.Name.O, "right")
		}
		if _, ok := commonType(lc.typ, rc.typ); !ok || categoryOf(lc.typ) != categoryOf(rc.typ) {
			return sqlerr.New(sqlerr.DatatypeMismatch, "JOIN/USING types %s and %s cannot be matched", lc.typ, rc.typ)
		}
		if err := usingEquality(lc.typ, rc.typ); err != nil {
			return err
		}
		join.LeftKeys = append(join.LeftKeys, lc.idx)
		join.RightKeys = append(join.RightKeys, rc.idx)
		lcols = append(lcols, lc)
		rcols = append(rcols, rc)
	}
	mergeUsingSide(out.sc, l.sc, lcols, rcols, lw, join.Kind == JoinRight)
	return nil
}

// mergeUsing rewrites a join scope so each (left, right) column pair is
// one visible name: the right copy is hidden from unqualified lookup and
// SELECT * lists the merged columns first, then the other left columns,
// then the other right ones (spec §2.6, Postgres' USING). For a RIGHT
// join the merged column is the right copy (the left one may be NULL),
// as in Postgres.
func mergeUsing(sc, lsc *scope, lcols, rcols []scopeCol, lw int) {
	mergeUsingSide(sc, lsc, lcols, rcols, lw, false)
}

func mergeUsingSide(sc, lsc *scope, lcols, rcols []scopeCol, lw int, right bool) {
	lset, rset := map[int]bool{}, map[int]bool{}
	for _, c := range lcols {
		lset[c.idx] = true
	}
	for _, c := range rcols {
		rset[c.idx+lw] = true
	}
	for i := range sc.cols {
		if !right && i >= len(lsc.cols) && rset[sc.cols[i].idx] || right && i < len(lsc.cols) && lset[sc.cols[i].idx] {
			sc.cols[i].hidden = true
		}
	}
	var star []int
	for k, lc := range lcols {
		for _, i := range sc.star {
			if !right && i < len(lsc.cols) && sc.cols[i].idx == lc.idx && !sc.cols[i].hidden ||
				right && i >= len(lsc.cols) && sc.cols[i].idx == rcols[k].idx+lw && !sc.cols[i].hidden {
				star = append(star, i)
				break
			}
		}
	}
	for _, i := range sc.star {
		if i < len(lsc.cols) {
			if !lset[sc.cols[i].idx] {
				star = append(star, i)
			}
		} else if !rset[sc.cols[i].idx] {
			star = append(star, i)
		}
	}
	sc.star = star
}

func usingError(err error, name, side string) error {
	if e, ok := sqlerr.As(err); ok && e.Code == sqlerr.UndefinedColumn {
		return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" specified in USING clause does not exist in %s table", name, side)
	}
	if e, ok := sqlerr.As(err); ok && e.Code == sqlerr.AmbiguousColumn {
		return sqlerr.New(sqlerr.AmbiguousColumn, "common column name \"%s\" appears more than once in %s table", name, side)
	}
	return err
}

// requalify makes a subquery's output columns carry its alias, so plans
// and messages name them as the query does (s.t, not the inner table's).
func requalify(n Node, alias string) {
	for {
		switch x := n.(type) {
		case *Sort:
			n = x.Input
			continue
		case *Limit:
			n = x.Input
			continue
		case *Distinct:
			n = x.Input
			continue
		case *DistinctOn:
			n = x.Input
			continue
		case *Filter:
			n = x.Input
			continue
		case *Project:
			setTable(x.Cols, alias)
		case *UnionAll:
			setTable(x.Cols, alias)
		case *SetOp:
			setTable(x.Cols, alias)
		case *Values:
			setTable(x.Cols, alias)
		case *Series:
			setTable(x.Cols, alias)
		case *Unnest:
			setTable(x.Cols, alias)
		case *Aggregate:
			setTable(x.cols, alias)
		case *RecursiveCTE:
			setTable(x.cols, alias)
		case *WorkTable:
			setTable(x.cols, alias)
		}
		return
	}
}

func setTable(cols []Column, alias string) {
	for i := range cols {
		cols[i].Table = alias
	}
}

// usingEquality refuses USING on a type without = (json, void), with
// PostgreSQL's message (and, as there, no position).
func usingEquality(l, r sqltypes.Type) error {
	if noEquality(l) || noEquality(r) {
		return sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s = %s", l, r).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	return nil
}

// bindFullUsing binds FULL JOIN ... USING (k, ...): each merged column is
// COALESCE(left.k, right.k), as in Postgres (either side may be the
// padded one), computed by a Project over the join; the two copies stay
// reachable by their qualifiers only. SELECT * lists the merged columns,
// then the other left ones, then the other right ones.
func (b *binder) bindFullUsing(using []*ast.ColumnName, l, r *rel, lw int, join *Join, out *rel) error {
	cols := join.Schema()
	p := &Project{Input: join}
	for i, c := range cols {
		p.Exprs = append(p.Exprs, &expr.Column{Index: i, Name: c.Name, T: c.Type})
		p.Cols = append(p.Cols, c)
	}
	keys := map[int]bool{}
	var merged []scopeCol
	for _, u := range using {
		lc, err := l.sc.lookup("", u.Name.O, 0)
		if err != nil {
			return usingError(err, u.Name.O, "left")
		}
		rc, err := r.sc.lookup("", u.Name.O, 0)
		if err != nil {
			return usingError(err, u.Name.O, "right")
		}
		t, ok := commonType(lc.typ, rc.typ)
		if !ok || categoryOf(lc.typ) != categoryOf(rc.typ) {
			return sqlerr.New(sqlerr.DatatypeMismatch, "JOIN/USING types %s and %s cannot be matched", lc.typ, rc.typ)
		}
		if err := usingEquality(lc.typ, rc.typ); err != nil {
			return err
		}
		if lc.typ.Kind != rc.typ.Kind {
			return sqlerr.New(sqlerr.FeatureNotSupported, "FULL JOIN ... USING on columns of different types (%s and %s) is not supported", lc.typ, rc.typ).
				WithHint("Cast one side in a subquery so both have the same type.")
		}
		join.LeftKeys = append(join.LeftKeys, lc.idx)
		join.RightKeys = append(join.RightKeys, rc.idx)
		keys[lc.idx], keys[rc.idx+lw] = true, true
		le := &expr.Column{Index: lc.idx, Name: lc.name, T: lc.typ}
		re := &expr.Column{Index: rc.idx + lw, Name: rc.name, T: rc.typ}
		p.Exprs = append(p.Exprs, &expr.Func{Fn: functions.Coalesce, Args: []expr.Expr{le, re}, T: t})
		p.Cols = append(p.Cols, Column{Name: u.Name.O, Type: t, Nullable: true})
		merged = append(merged, scopeCol{name: u.Name.O, idx: len(p.Cols) - 1, typ: t, nullable: true})
	}
	sc := out.sc
	var star []int
	for i := range merged {
		star = append(star, len(sc.cols)+i)
	}
	for _, i := range sc.star {
		if keys[sc.cols[i].idx] {
			continue
		}
		star = append(star, i)
	}
	for i := range sc.cols {
		if keys[sc.cols[i].idx] {
			sc.cols[i].hidden = true
		}
	}
	sc.cols = append(sc.cols, merged...)
	sc.star = star
	out.node = p
	return nil
}
