package parser

import (
	"strings"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// TruncateStmt is TRUNCATE [TABLE] [ONLY] name [*] [, ...] [RESTART |
// CONTINUE IDENTITY] [CASCADE | RESTRICT]. asofsql has neither identity
// columns nor foreign keys, so the options change nothing.
type TruncateStmt struct {
	Tables []TableName
	// Pos are the 1-based positions of the table names.
	Pos []int
}

// AlterKind is the kind of one ALTER TABLE action.
type AlterKind uint8

// ALTER TABLE actions.
const (
	// AlterAddColumn is ADD [COLUMN] [IF NOT EXISTS] column definition.
	AlterAddColumn AlterKind = iota + 1
	// AlterDropColumn is DROP [COLUMN] [IF EXISTS] name [RESTRICT | CASCADE].
	AlterDropColumn
	// AlterRenameColumn is RENAME [COLUMN] name TO new.
	AlterRenameColumn
	// AlterRenameTable is RENAME TO new.
	AlterRenameTable
)

// AlterAction is one action of ALTER TABLE. Column is the definition of
// ADD COLUMN; Name the column DROP and RENAME COLUMN name; NewName the new
// name of a RENAME; IfExists is IF NOT EXISTS for ADD and IF EXISTS for
// DROP. Pos is the 1-based position of the action's first word.
type AlterAction struct {
	Kind     AlterKind
	Column   ColumnDef
	Name     string
	NewName  string
	IfExists bool
	Pos      int
}

// AlterTableStmt is ALTER TABLE [IF EXISTS] [ONLY] name [*] action [, ...]
// with ADD COLUMN and DROP COLUMN actions, or one RENAME.
type AlterTableStmt struct {
	Table    TableName
	IfExists bool
	Actions  []AlterAction
}

// CreateViewStmt is CREATE [OR REPLACE] [TEMP | TEMPORARY] VIEW name
// [(column, ...)] AS query. Query is the parsed query; its Text is the
// query as written, which is what a view stores.
type CreateViewStmt struct {
	Name      TableName
	OrReplace bool
	Temporary bool
	Columns   []string
	Query     *Statement
}

func (*TruncateStmt) node()   {}
func (*AlterTableStmt) node() {}
func (*CreateViewStmt) node() {}

func (c *cursor) truncate() (Node, error) {
	c.accept("table")
	st := &TruncateStmt{}
	for {
		c.accept("only")
		t := c.peek()
		tn, err := c.tableName()
		if err != nil {
			return nil, err
		}
		c.accept("*")
		st.Tables = append(st.Tables, tn)
		st.Pos = append(st.Pos, charPos(c.src, t.start))
		if !c.accept(",") {
			break
		}
	}
	if c.accept("restart") || c.accept("continue") {
		if err := c.expect("identity"); err != nil {
			return nil, err
		}
	}
	if !c.accept("cascade") {
		c.accept("restrict")
	}
	return st, c.expectEnd()
}

// isCreateTableAs reports CREATE [TEMP] TABLE ... AS, which EXPLAIN takes.
func isCreateTableAs(toks []token) bool {
	if !isCreateTable(toks) {
		return false
	}
	depth := 0
	for _, t := range toks {
		switch {
		case t.isOp("("):
			depth++
		case t.isOp(")"):
			depth--
		case depth == 0 && t.is("as"):
			return true
		}
	}
	return false
}

// isCreateView reports CREATE [OR REPLACE] [TEMP | TEMPORARY] [RECURSIVE]
// VIEW.
func isCreateView(toks []token) bool {
	i := 1
	if i+1 < len(toks) && toks[i].is("or") && toks[i+1].is("replace") {
		i += 2
	}
	if i < len(toks) && (toks[i].is("temp") || toks[i].is("temporary")) {
		i++
	}
	if i < len(toks) && toks[i].is("recursive") {
		i++
	}
	return i < len(toks) && toks[i].is("view")
}

func (c *cursor) createView() (Node, error) {
	st := &CreateViewStmt{}
	if c.accept("or") {
		if err := c.expect("replace"); err != nil {
			return nil, err
		}
		st.OrReplace = true
	}
	if c.accept("temp") || c.accept("temporary") {
		st.Temporary = true
	}
	if c.peek().is("recursive") {
		return nil, c.unsupported("CREATE RECURSIVE VIEW")
	}
	if err := c.expect("view"); err != nil {
		return nil, err
	}
	tn, err := c.tableName()
	if err != nil {
		return nil, err
	}
	st.Name = tn
	if c.peek().isOp("(") {
		if st.Columns, err = c.nameList(); err != nil {
			return nil, err
		}
	}
	if c.peek().is("with") {
		return nil, c.unsupported("CREATE VIEW WITH (...)")
	}
	if err := c.expect("as"); err != nil {
		return nil, err
	}
	rest := c.toks[c.i:]
	// WITH [CASCADED | LOCAL] CHECK OPTION ends the statement; the query
	// cannot end in those words.
	if n := len(rest); n >= 3 && rest[n-1].is("option") && rest[n-2].is("check") {
		k := n - 3
		if rest[k].is("cascaded") || rest[k].is("local") {
			k--
		}
		if k >= 0 && rest[k].is("with") {
			return nil, posError(c.src, rest[k].start, sqlerr.FeatureNotSupported, "WITH CHECK OPTION is not supported").
				WithHint("asofsql views cannot be written to, so there is nothing to check.")
		}
	}
	q, err := c.query(rest, c.end)
	if err != nil {
		return nil, err
	}
	st.Query = q
	return st, nil
}

// query parses toks as the query of CREATE VIEW or CREATE TABLE AS: a
// SELECT, VALUES, TABLE, WITH or parenthesized query.
func (c *cursor) query(toks []token, end int) (*Statement, error) {
	if len(toks) == 0 {
		return nil, syntaxErrAt(c.src, c.toks, len(c.toks))
	}
	first := toks[0]
	if first.is("execute") {
		return nil, posError(c.src, first.start, sqlerr.FeatureNotSupported, "CREATE TABLE AS EXECUTE is not supported").
			WithHint("Write the prepared statement's query instead.")
	}
	if !(first.is("select") || first.is("with") || first.is("values") || first.is("table") || first.isOp("(")) {
		return nil, posError(c.src, first.start, sqlerr.SyntaxError, "syntax error at or near \"%s\"", c.src[first.start:first.end])
	}
	q, err := parseStatement(c.in, toks, end)
	if err != nil {
		return nil, err
	}
	if _, ok := q.AST.(ast.ResultSetNode); !ok {
		return nil, posError(c.src, first.start, sqlerr.SyntaxError, "syntax error at or near \"%s\"", c.src[first.start:first.end])
	}
	return q, nil
}

// createTableAs parses the rest of CREATE TABLE name [(column names)]
// [ORDER BY (...)] AS query [WITH [NO] DATA], after AS.
func (c *cursor) createTableAs(st *CreateTableStmt) (Node, error) {
	rest := c.toks[c.i:]
	end := c.end
	st.WithData = true
	if n := len(rest); n >= 2 && rest[n-1].is("data") {
		switch {
		case rest[n-2].is("with"):
			rest, end = rest[:n-2], rest[n-2].start
		case n >= 3 && rest[n-2].is("no") && rest[n-3].is("with"):
			rest, end = rest[:n-3], rest[n-3].start
			st.WithData = false
		}
	}
	q, err := c.query(rest, end)
	if err != nil {
		return nil, err
	}
	st.AsQuery = q
	return st, nil
}

// alterWhat names what an ALTER statement alters ("TABLE", "VIEW",
// "MATERIALIZED VIEW", ...): only ALTER TABLE is ours, the others are
// refused by that name.
func alterWhat(toks []token) string {
	if len(toks) < 2 || toks[1].kind != tkIdent {
		return ""
	}
	w := toks[1].val
	if (w == "materialized" || w == "foreign") && len(toks) > 2 {
		w += " " + toks[2].val
	}
	return strings.ToUpper(w)
}

func (c *cursor) alterTable() (Node, error) {
	if err := c.expect("table"); err != nil {
		return nil, err
	}
	st := &AlterTableStmt{}
	if c.peek().is("if") {
		c.i++
		if err := c.expect("exists"); err != nil {
			return nil, err
		}
		st.IfExists = true
	}
	c.accept("only")
	tn, err := c.tableName()
	if err != nil {
		return nil, err
	}
	c.accept("*")
	st.Table = tn
	if c.peek().is("rename") {
		a, err := c.rename()
		if err != nil {
			return nil, err
		}
		st.Actions = []AlterAction{a}
		return st, c.expectEnd()
	}
	for {
		a, err := c.alterAction()
		if err != nil {
			return nil, err
		}
		st.Actions = append(st.Actions, a)
		if !c.accept(",") {
			break
		}
	}
	return st, c.expectEnd()
}

func (c *cursor) rename() (AlterAction, error) {
	t := c.peek()
	c.i++
	a := AlterAction{Pos: charPos(c.src, t.start)}
	switch {
	case c.accept("to"):
		a.Kind = AlterRenameTable
	case c.peek().is("constraint"):
		return a, c.unsupported("ALTER TABLE RENAME CONSTRAINT")
	default:
		c.accept("column")
		name, err := c.name()
		if err != nil {
			return a, err
		}
		if err := c.expect("to"); err != nil {
			return a, err
		}
		a.Kind, a.Name = AlterRenameColumn, name
	}
	name, err := c.name()
	if err != nil {
		return a, err
	}
	a.NewName = name
	return a, nil
}

func (c *cursor) alterAction() (AlterAction, error) {
	t := c.peek()
	a := AlterAction{Pos: charPos(c.src, t.start)}
	switch {
	case c.accept("add"):
		if c.peek().is("constraint") || c.peek().is("primary") || c.peek().is("unique") || c.peek().is("check") ||
			c.peek().is("foreign") || c.peek().is("exclude") {
			return a, c.unsupported("ALTER TABLE ADD " + strings.ToUpper(c.peek().val))
		}
		c.accept("column")
		a.Kind = AlterAddColumn
		if c.peek().is("if") {
			c.i++
			if err := c.expect("not"); err != nil {
				return a, err
			}
			if err := c.expect("exists"); err != nil {
				return a, err
			}
			a.IfExists = true
		}
		col, err := c.columnDef(nil)
		if err != nil {
			return a, err
		}
		a.Column = col
		return a, nil
	case c.accept("drop"):
		if c.peek().is("constraint") {
			return a, c.unsupported("ALTER TABLE DROP CONSTRAINT")
		}
		c.accept("column")
		a.Kind = AlterDropColumn
		if c.peek().is("if") {
			c.i++
			if err := c.expect("exists"); err != nil {
				return a, err
			}
			a.IfExists = true
		}
		name, err := c.name()
		if err != nil {
			return a, err
		}
		a.Name = name
		if !c.accept("restrict") {
			c.accept("cascade")
		}
		return a, nil
	case t.is("rename"):
		// RENAME cannot be combined with other actions (Postgres' grammar).
		return a, c.fail()
	case t.is("alter"):
		return a, c.unsupported("ALTER TABLE ... ALTER COLUMN")
	case t.kind == tkIdent && (t.val == "set" || t.val == "reset" || t.val == "owner" || t.val == "cluster" ||
		t.val == "enable" || t.val == "disable" || t.val == "inherit" || t.val == "no" || t.val == "replica" ||
		t.val == "attach" || t.val == "detach" || t.val == "validate" || t.val == "of" || t.val == "not" || t.val == "force"):
		return a, c.unsupported("ALTER TABLE " + strings.ToUpper(t.val))
	}
	return a, c.fail()
}

// columnDef parses a column definition: name type [NOT NULL | NULL |
// DEFAULT expr] ...; CREATE TABLE passes the primary key handling (pk
// non-nil) and ALTER TABLE ADD COLUMN does not.
func (c *cursor) columnDef(pk func(k token, name string) error) (ColumnDef, error) {
	t := c.peek()
	name, err := c.name()
	if err != nil {
		return ColumnDef{}, err
	}
	typ, next, err := parseType(c.src, c.toks, c.i)
	if err != nil {
		return ColumnDef{}, err
	}
	c.i = next
	col := ColumnDef{Name: name, Type: typ, Pos: charPos(c.src, t.start)}
	for {
		k := c.peek()
		switch {
		case c.accept("not"):
			if err := c.expect("null"); err != nil {
				return col, err
			}
			col.NotNull = true
			continue
		case c.accept("null"):
			continue
		case k.is("primary") && pk != nil:
			c.i++
			if err := c.expect("key"); err != nil {
				return col, err
			}
			if err := pk(k, name); err != nil {
				return col, err
			}
			col.NotNull = true
			continue
		case c.accept("default"):
			if col.Default != nil {
				return col, posError(c.src, k.start, sqlerr.SyntaxError,
					"multiple default values specified for column \"%s\" of table", name)
			}
			d, err := c.defaultExpr()
			if err != nil {
				return col, err
			}
			col.Default = d
			continue
		case k.is("unique") || k.is("references") || k.is("check") || k.is("generated") || k.is("collate") ||
			k.is("constraint") || k.is("primary"):
			return col, c.unsupported("column constraint " + strings.ToUpper(k.val))
		}
		return col, nil
	}
}

// defaultExpr parses DEFAULT's expression: everything up to the next
// column constraint or the "," or ")" that ends the column at its depth
// (Postgres' b_expr has no bare NOT, NULL or IS, so those words end it).
func (c *cursor) defaultExpr() (*Statement, error) {
	start := c.i
	depth := 0
	k := c.i
loop:
	for ; k < len(c.toks); k++ {
		t := c.toks[k]
		switch {
		case t.isOp("(") || t.isOp("["):
			depth++
		case t.isOp(")") || t.isOp("]"):
			if depth == 0 {
				break loop
			}
			depth--
		case depth > 0:
		case t.isOp(","):
			break loop
		case t.is("not") || t.is("null") || t.is("default") || t.is("constraint") || t.is("check") || t.is("unique") ||
			t.is("references") || t.is("primary") || t.is("generated") || t.is("collate"):
			break loop
		}
	}
	if k == start {
		return nil, c.fail()
	}
	toks := c.toks[start:k]
	end := c.end
	if k < len(c.toks) {
		end = c.toks[k].start
	}
	st := &Statement{src: c.src, ri: c.in.ri, Start: toks[0].start, End: toks[len(toks)-1].end}
	st.Text = c.src[st.Start:st.End]
	if _, err := parseTiDB(c.in, st, toks, end, "select "); err != nil {
		return nil, err
	}
	sel, ok := st.AST.(*ast.SelectStmt)
	if !ok || sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil ||
		sel.Limit != nil || sel.Distinct || sel.With != nil || sel.Fields == nil || len(sel.Fields.Fields) != 1 ||
		sel.Fields.Fields[0].WildCard != nil || sel.Fields.Fields[0].AsName.O != "" {
		return nil, syntaxErrAt(c.src, c.toks, start)
	}
	c.i = k
	return st, nil
}

// DefaultExpr returns the expression of a DEFAULT clause parsed into st
// (ColumnDef.Default).
func DefaultExpr(st *Statement) ast.ExprNode {
	return st.AST.(*ast.SelectStmt).Fields.Fields[0].Expr
}

// dmlForms checks the Postgres forms of UPDATE and DELETE that TiDB's
// MySQL grammar would read differently: FROM in UPDATE and USING in
// DELETE (other tables; 0A000), a multiple-column assignment SET (a, b) =
// (0A000), WHERE CURRENT OF (0A000), and MySQL's ORDER BY and LIMIT on
// them and its DELETE t FROM ... (syntax errors in Postgres). ONLY before
// the table is dropped: asofsql has no inheritance, so it changes nothing.
//
// It returns the 1-based positions of UPDATE's assigned columns, in
// order (TiDB's AST keeps none for them).
func dmlForms(src string, toks []token, e *edits) ([]int, error) {
	if len(toks) < 2 || !(toks[0].is("update") || toks[0].is("delete")) {
		return nil, nil
	}
	var assigned []int
	update := toks[0].is("update")
	at := func(k int, what string) *sqlerr.Error {
		return posError(src, toks[k].start, sqlerr.FeatureNotSupported, "%s is not supported", what)
	}
	table := 1
	if !update {
		if !toks[1].is("from") {
			return nil, syntaxErrAt(src, toks, 1)
		}
		table = 2
	}
	if table+1 < len(toks) && toks[table].is("only") && (toks[table+1].kind == tkIdent || toks[table+1].kind == tkQIdent) {
		e.drop(table)
	}
	depth := 0
	afterSet := false
	for k := table; k < len(toks); k++ {
		t := toks[k]
		switch {
		case t.isOp("(") || t.isOp("["):
			if update && k > 0 && (toks[k-1].is("set") || afterSet && toks[k-1].isOp(",")) && depth == 0 {
				return nil, at(k, "a multiple-column assignment SET (a, b) = ...")
			}
			depth++
		case t.isOp(")") || t.isOp("]"):
			depth--
		case depth > 0:
		case afterSet && (toks[k-1].is("set") || toks[k-1].isOp(",")):
			assigned = append(assigned, charPos(src, t.start))
		case t.kind != tkIdent:
		case t.val == "set" && update && !afterSet:
			afterSet = true
		case t.val == "from" && update && afterSet && !toks[k-1].is("distinct"):
			return nil, at(k, "UPDATE ... FROM").WithHint("Update from another table with a subquery: SET c = (SELECT ...) WHERE k IN (SELECT ...).")
		case t.val == "using" && !update:
			return nil, at(k, "DELETE ... USING").WithHint("Delete rows matching another table with a subquery: WHERE k IN (SELECT ...).")
		case t.val == "current" && k+1 < len(toks) && toks[k+1].is("of") && toks[k-1].is("where"):
			return nil, at(k, "WHERE CURRENT OF")
		case t.val == "order" && k+1 < len(toks) && toks[k+1].is("by"), t.val == "limit":
			return nil, syntaxErrAt(src, toks, k)
		case t.val == "where":
			afterSet = false
		}
	}
	return assigned, nil
}
