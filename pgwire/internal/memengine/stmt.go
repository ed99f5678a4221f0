package memengine

import (
	"context"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

type batch struct {
	s     *session
	sql   string
	stmts []*parser.Statement
	i     int
}

func (b *batch) Next(ctx context.Context) (pgwire.Statement, error) {
	if b.i >= len(b.stmts) {
		return nil, io.EOF
	}
	st := b.stmts[b.i]
	b.i++
	return b.s.analyze(b.sql, st, nil)
}

func (b *batch) Close() error { return nil }

// Query implements pgwire.Session.
func (s *session) Query(ctx context.Context, sql string) (pgwire.Batch, error) {
	stmts, err := parser.Parse(sql)
	if err != nil {
		return nil, err
	}
	return &batch{s: s, sql: sql, stmts: stmts}, nil
}

// Prepare implements pgwire.Session.
func (s *session) Prepare(ctx context.Context, sql string, types []sqltypes.Type) (pgwire.Statement, error) {
	stmts, err := parser.Parse(sql)
	if err != nil {
		return nil, err
	}
	switch len(stmts) {
	case 0:
		return nil, nil
	case 1:
		return s.analyze(sql, stmts[0], types)
	}
	return nil, errorf(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
}

// stmt is every statement shape; run produces its result.
type stmt struct {
	params []sqltypes.Type
	cols   []pgwire.Column
	run    func(ctx context.Context, params arrow.RecordBatch) (pgwire.Result, error)
}

func (st *stmt) ParamTypes() []sqltypes.Type { return st.params }
func (st *stmt) Columns() []pgwire.Column    { return st.cols }
func (st *stmt) Close() error                { return nil }
func (st *stmt) Execute(ctx context.Context, params arrow.RecordBatch) (pgwire.Result, error) {
	return st.run(ctx, params)
}

// tagResult is a result without rows.
type tagResult struct{ tag string }

func (r tagResult) Next(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF }
func (r tagResult) Tag(int64) string                                { return r.tag }
func (r tagResult) Close() error                                    { return nil }

// rowsResult yields batches from a producer.
type rowsResult struct {
	next    func(ctx context.Context) (arrow.RecordBatch, error)
	verb    string // "SELECT" or "SHOW"
	release func()
}

func (r *rowsResult) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.next(ctx)
}

func (r *rowsResult) Tag(n int64) string {
	if r.verb == "SELECT" {
		return "SELECT " + strconv.FormatInt(n, 10)
	}
	return r.verb
}

func (r *rowsResult) Close() error {
	if r.release != nil {
		r.release()
		r.release = nil
	}
	return nil
}

func (s *session) analyze(sql string, p *parser.Statement, declared []sqltypes.Type) (*stmt, error) {
	if tx, ok := p.Node.(*parser.TransactionStmt); ok {
		return s.txStmt(tx), nil
	}
	if s.tx == 'E' {
		return nil, errorf(sqlerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	switch n := p.Node.(type) {
	case *parser.SetStmt:
		return s.setStmt(n), nil
	case *parser.ShowStmt:
		return s.showStmt(n)
	case *parser.CopyStmt:
		return s.copyStmt(p, n)
	case *parser.CreateTableStmt:
		return s.createStmt(n), nil
	}
	if sel, ok := p.AST.(*ast.SelectStmt); ok {
		return s.selectStmt(sql, p, sel, declared)
	}
	return nil, errorf(sqlerr.FeatureNotSupported, "statement not supported by the test engine").WithPosition(p.PosOf(0))
}

func (s *session) txStmt(n *parser.TransactionStmt) *stmt {
	return &stmt{run: func(context.Context, arrow.RecordBatch) (pgwire.Result, error) {
		switch n.Kind {
		case parser.TxnBegin:
			if s.tx != 'I' {
				s.notice(errorf(sqlerr.ActiveSQLTransaction, "there is already a transaction in progress").WithSeverity("WARNING"))
			}
			if s.tx == 'I' {
				s.tx = 'T'
			}
			return tagResult{"BEGIN"}, nil
		case parser.TxnCommit:
			switch s.tx {
			case 'I':
				s.notice(errorf(sqlerr.NoActiveSQLTransaction, "there is no transaction in progress").WithSeverity("WARNING"))
				return tagResult{"COMMIT"}, nil
			case 'E':
				s.discard()
				s.tx = 'I'
				return tagResult{"ROLLBACK"}, nil
			}
			s.commit()
			s.tx = 'I'
			return tagResult{"COMMIT"}, nil
		default:
			if s.tx == 'I' {
				s.notice(errorf(sqlerr.NoActiveSQLTransaction, "there is no transaction in progress").WithSeverity("WARNING"))
			}
			s.discard()
			s.tx = 'I'
			return tagResult{"ROLLBACK"}, nil
		}
	}}
}

func (s *session) setStmt(n *parser.SetStmt) *stmt {
	return &stmt{run: func(context.Context, arrow.RecordBatch) (pgwire.Result, error) {
		v, ok := defaultSettings[n.Name]
		if !n.Default {
			v = strings.Join(n.Values, ", ")
			ok = true
		}
		if !ok {
			return nil, errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", n.Name)
		}
		if err := s.set(n.Name, v); err != nil {
			return nil, err
		}
		return tagResult{"SET"}, nil
	}}
}

func (s *session) showStmt(n *parser.ShowStmt) (*stmt, error) {
	if n.All {
		return nil, errorf(sqlerr.FeatureNotSupported, "SHOW ALL is not supported by the test engine")
	}
	if _, ok := s.settings[n.Name]; !ok {
		return nil, errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", n.Name)
	}
	name := n.Name
	if d, ok := displayName[name]; ok {
		name = d
	}
	cols := []pgwire.Column{{Name: name, Type: sqltypes.TextType}}
	return &stmt{cols: cols, run: func(context.Context, arrow.RecordBatch) (pgwire.Result, error) {
		b := array.NewStringBuilder(s.e.mem)
		defer b.Release()
		b.Append(s.settings[n.Name])
		rec := oneBatch(cols, []arrow.Array{b.NewArray()}, 1)
		return sliceResult("SHOW", []arrow.RecordBatch{rec}), nil
	}}, nil
}

func (s *session) createStmt(n *parser.CreateTableStmt) *stmt {
	return &stmt{run: func(context.Context, arrow.RecordBatch) (pgwire.Result, error) {
		fields := make([]arrow.Field, len(n.Columns))
		for i, c := range n.Columns {
			fields[i] = c.Type.Field(c.Name, !c.NotNull)
		}
		err := s.e.AddTable(n.Table.Name, arrow.NewSchema(fields, nil))
		if err != nil {
			if n.IfNotExists && sqlerr.Code(err) == sqlerr.DuplicateTable {
				return tagResult{"CREATE TABLE"}, nil
			}
			return nil, err
		}
		return tagResult{"CREATE TABLE"}, nil
	}}
}

// oneBatch makes a batch from arrays it takes ownership of.
func oneBatch(cols []pgwire.Column, arrs []arrow.Array, rows int64) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = c.Type.Field(c.Name, true)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, rows)
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// sliceResult yields recs in turn, transferring ownership; those not yet
// yielded when the result is closed (cancelled, or closed unread) are
// released then.
func sliceResult(verb string, recs []arrow.RecordBatch) *rowsResult {
	return &rowsResult{verb: verb,
		next: func(context.Context) (arrow.RecordBatch, error) {
			if len(recs) == 0 {
				return nil, io.EOF
			}
			r := recs[0]
			recs = recs[1:]
			return r, nil
		},
		release: func() {
			releaseAll(recs)
			recs = nil
		},
	}
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

func (s *session) tableCols(t *table) []pgwire.Column {
	cols := make([]pgwire.Column, len(t.types))
	for i, ty := range t.types {
		cols[i] = pgwire.Column{Name: t.schema.Field(i).Name, Type: ty, TableOID: t.oid, Attr: int16(i + 1)}
	}
	return cols
}

func (s *session) selectStmt(sql string, p *parser.Statement, sel *ast.SelectStmt, declared []sqltypes.Type) (*stmt, error) {
	if sel.From != nil {
		return s.selectTable(sql, p, sel)
	}
	if sel.Where != nil || sel.GroupBy != nil || sel.OrderBy != nil || sel.Limit != nil {
		return nil, errorf(sqlerr.FeatureNotSupported, "the test engine runs only bare SELECT lists without FROM").WithPosition(p.PosOf(0))
	}
	params := make([]sqltypes.Type, p.NumParams)
	for i := range params {
		params[i] = sqltypes.UnknownType
		if i < len(declared) {
			params[i] = declared[i]
		}
	}
	items := make([]item, len(sel.Fields.Fields))
	for i, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			return nil, errorf(sqlerr.SyntaxError, "SELECT * with no tables specified is not valid").WithPosition(p.PosOf(0))
		}
		it, err := s.compile(p, f.Expr, params)
		if err != nil {
			return nil, err
		}
		if f.AsName.O != "" {
			it.name = f.AsName.O
		}
		items[i] = it
		if it.series && len(sel.Fields.Fields) > 1 {
			return nil, errorf(sqlerr.FeatureNotSupported, "generate_series must be alone in the SELECT list of the test engine").WithPosition(p.Pos(f.Expr))
		}
	}
	for i, t := range params {
		if t.Kind == sqltypes.Unknown && i < len(declared) {
			params[i] = declared[i]
		}
	}
	cols := make([]pgwire.Column, len(items))
	for i, it := range items {
		cols[i] = pgwire.Column{Name: it.name, Type: it.typ}
	}
	return &stmt{params: params, cols: cols, run: func(ctx context.Context, pb arrow.RecordBatch) (pgwire.Result, error) {
		return s.runItems(ctx, items, cols, pb)
	}}, nil
}

func (s *session) selectTable(sql string, p *parser.Statement, sel *ast.SelectStmt) (*stmt, error) {
	ts, ok := sel.From.TableRefs.Left.(*ast.TableSource)
	if !ok || sel.From.TableRefs.Right != nil || sel.Where != nil || sel.GroupBy != nil || sel.OrderBy != nil {
		return nil, errorf(sqlerr.FeatureNotSupported, "the test engine runs only SELECT * FROM table [LIMIT n]").WithPosition(p.PosOf(0))
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil, errorf(sqlerr.FeatureNotSupported, "the test engine reads only tables").WithPosition(p.PosOf(0))
	}

	limit := int64(-1)
	if sel.Limit != nil {
		v, ok := sel.Limit.Count.(*test_driver.ValueExpr)
		if !ok || v.Datum.Kind() != test_driver.KindInt64 && v.Datum.Kind() != test_driver.KindUint64 {
			return nil, errorf(sqlerr.FeatureNotSupported, "LIMIT must be a number in the test engine")
		}
		limit = v.Datum.GetInt64()
	}
	name := tn.Name.O
	t, snap := s.e.snapshot(name)
	if t == nil {
		return nil, errorf(sqlerr.UndefinedTable, "relation %q does not exist", name).WithPosition(namePos(sql, p, name))
	}
	releaseAll(snap)
	all := s.tableCols(t)
	// The select list is * or a list of plain column names (pgx CopyFrom
	// describes "select a, b from t" to learn the column types).
	var proj []int
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			for i := range all {
				proj = append(proj, i)
			}
			continue
		}
		cn, ok := f.Expr.(*ast.ColumnNameExpr)
		if !ok {
			return nil, errorf(sqlerr.FeatureNotSupported, "the test engine selects only columns from a table").WithPosition(p.Pos(f.Expr))
		}
		idx := -1
		for i, c := range all {
			if c.Name == cn.Name.Name.O {
				idx = i
			}
		}
		if idx < 0 {
			return nil, errorf(sqlerr.UndefinedColumn, "column %q does not exist", cn.Name.Name.O).WithPosition(p.Pos(f.Expr))
		}
		proj = append(proj, idx)
	}
	cols := make([]pgwire.Column, len(proj))
	for i, k := range proj {
		cols[i] = all[k]
	}
	project := func(r arrow.RecordBatch) arrow.RecordBatch {
		arrs := make([]arrow.Array, len(proj))
		fields := make([]arrow.Field, len(proj))
		for i, k := range proj {
			arrs[i] = r.Column(k)
			fields[i] = r.Schema().Field(k)
		}
		out := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, r.NumRows())
		r.Release()
		return out
	}
	return &stmt{cols: cols, run: func(ctx context.Context, _ arrow.RecordBatch) (pgwire.Result, error) {
		_, recs := s.e.snapshot(name)
		for _, pnd := range s.pending {
			if pnd.table == name {
				for _, b := range pnd.batches {
					b.Retain()
					recs = append(recs, b)
				}
			}
		}
		left := limit
		i := 0
		return &rowsResult{verb: "SELECT",
			next: func(context.Context) (arrow.RecordBatch, error) {
				if i >= len(recs) || left == 0 {
					return nil, io.EOF
				}
				r := recs[i]
				recs[i] = nil
				i++
				if left > 0 && r.NumRows() > left {
					sl := r.NewSlice(0, left)
					r.Release()
					r = sl
				}
				if left > 0 {
					left -= r.NumRows()
				}
				return project(r), nil
			},
			release: func() {
				for _, r := range recs[i:] {
					if r != nil {
						r.Release()
					}
				}
			}}, nil
	}}, nil
}

// item is one compiled SELECT-list expression.
type item struct {
	name   string
	typ    sqltypes.Type
	param  int    // >= 0: the value of $param+1
	text   string // literal text to decode as typ
	null   bool
	series bool // generate_series(lo, hi)
	lo, hi int64
	sleep  time.Duration
	fail   *sqlerr.Error
}

var typeNames = map[sqltypes.Kind]string{
	sqltypes.Bool: "bool", sqltypes.Int2: "int2", sqltypes.Int4: "int4", sqltypes.Int8: "int8",
	sqltypes.Float4: "float4", sqltypes.Float8: "float8", sqltypes.Numeric: "numeric",
	sqltypes.Text: "text", sqltypes.Varchar: "varchar", sqltypes.Bytea: "bytea", sqltypes.Date: "date",
	sqltypes.Timestamp: "timestamp", sqltypes.TimestampTZ: "timestamptz", sqltypes.Interval: "interval",
}

func (s *session) compile(p *parser.Statement, e ast.ExprNode, params []sqltypes.Type) (item, error) {
	it := item{name: "?column?", param: -1}
	switch x := e.(type) {
	case *test_driver.ValueExpr:
		d := &x.Datum
		switch d.Kind() {
		case test_driver.KindNull:
			it.typ, it.null = sqltypes.TextType, true
		case test_driver.KindInt64, test_driver.KindUint64:
			it.text = strconv.FormatInt(d.GetInt64(), 10)
			it.typ = sqltypes.Int4Type
			if v := d.GetInt64(); v > 1<<31-1 || v < -1<<31 {
				it.typ = sqltypes.Int8Type
			}
		case test_driver.KindString:
			it.typ, it.text = sqltypes.TextType, d.GetString()
		case test_driver.KindMysqlDecimal:
			it.typ, it.text = sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit), d.GetMysqlDecimal().String()
		case test_driver.KindFloat64:
			it.typ, it.text = sqltypes.Float8Type, strconv.FormatFloat(d.GetFloat64(), 'g', -1, 64)
		default:
			return it, errorf(sqlerr.FeatureNotSupported, "literal not supported by the test engine").WithPosition(p.Pos(e))
		}
		return it, nil
	case *ast.ParenthesesExpr:
		return s.compile(p, x.Expr, params)
	case *test_driver.ParamMarkerExpr:
		it.param = x.Order
		it.typ = params[x.Order]
		if it.typ.Kind == sqltypes.Unknown {
			it.typ = sqltypes.TextType
		}
		return it, nil
	case *ast.UnaryOperationExpr:
		in, err := s.compile(p, x.V, params)
		if err == nil && in.param < 0 && !in.null && in.typ.IsNumeric() && x.Op.String() == "minus" {
			in.text = "-" + in.text
			return in, nil
		}
	case *ast.FuncCallExpr:
		if cast, ok := p.Casts[x]; ok {
			in, err := s.compile(p, x.Args[0], params)
			if err != nil {
				return it, err
			}
			if in.series || in.sleep > 0 || in.fail != nil {
				return it, errorf(sqlerr.FeatureNotSupported, "cannot cast a function result in the test engine").WithPosition(p.Pos(e))
			}
			in.name = typeNames[cast.Type.Kind]
			if in.param >= 0 {
				if params[in.param].Kind == sqltypes.Unknown {
					params[in.param] = cast.Type
				}
			} else if !in.null {
				// Check the literal now, so a bad one fails at its position.
				b := array.NewBuilder(s.e.mem, cast.Type.Arrow())
				err := sqltypes.DecodeText(b, cast.Type, in.text, s.opts)
				b.Release()
				if err != nil {
					if se, ok := sqlerr.As(err); ok {
						return it, se.WithPosition(p.Pos(x.Args[0]))
					}
					return it, err
				}
			}
			in.typ = cast.Type
			return in, nil
		}
		return s.compileFunc(p, x)
	case *ast.ColumnNameExpr:
		return it, errorf(sqlerr.UndefinedColumn, "column %q does not exist", x.Name.Name.O).WithPosition(p.Pos(e))
	}
	return it, errorf(sqlerr.FeatureNotSupported, "expression not supported by the test engine").WithPosition(p.Pos(e))
}

func intArg(p *parser.Statement, e ast.ExprNode) (int64, float64, error) {
	v, ok := e.(*test_driver.ValueExpr)
	if ok {
		switch v.Datum.Kind() {
		case test_driver.KindInt64, test_driver.KindUint64:
			return v.Datum.GetInt64(), float64(v.Datum.GetInt64()), nil
		case test_driver.KindMysqlDecimal:
			f, err := strconv.ParseFloat(v.Datum.GetMysqlDecimal().String(), 64)
			if err == nil {
				return int64(f), f, nil
			}
		}
	}
	return 0, 0, errorf(sqlerr.FeatureNotSupported, "the test engine needs a number literal here").WithPosition(p.Pos(e))
}

func (s *session) compileFunc(p *parser.Statement, x *ast.FuncCallExpr) (item, error) {
	it := item{name: x.FnName.L, param: -1}
	switch x.FnName.L {
	case "generate_series":
		if len(x.Args) == 2 {
			lo, _, err := intArg(p, x.Args[0])
			if err != nil {
				return it, err
			}
			hi, _, err := intArg(p, x.Args[1])
			if err != nil {
				return it, err
			}
			it.series, it.lo, it.hi, it.typ = true, lo, hi, sqltypes.Int8Type
			return it, nil
		}
	case "pg_sleep":
		if len(x.Args) == 1 {
			_, secs, err := intArg(p, x.Args[0])
			if err != nil {
				return it, err
			}
			it.sleep, it.typ, it.null = time.Duration(secs*float64(time.Second)), sqltypes.TextType, true
			return it, nil
		}
	case "fail":
		if len(x.Args) == 1 {
			if v, ok := x.Args[0].(*test_driver.ValueExpr); ok && v.Datum.Kind() == test_driver.KindString {
				it.fail = errorf(sqlerr.DivisionByZero, "%s", v.Datum.GetString()).
					WithPosition(p.Pos(x)).WithDetail("raised by fail()").WithHint("do not call fail()")
				it.typ = sqltypes.TextType
				return it, nil
			}
		}
	}
	types := make([]string, len(x.Args))
	for i := range types {
		types[i] = "unknown"
	}
	return it, errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", x.FnName.O, strings.Join(types, ", ")).
		WithPosition(p.Pos(x)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// runItems evaluates the SELECT list: one row, or generate_series' rows
// produced 4096 at a time as the server asks for them.
func (s *session) runItems(ctx context.Context, items []item, cols []pgwire.Column, pb arrow.RecordBatch) (pgwire.Result, error) {
	row := make([]arrow.Array, len(items))
	release := func() {
		for _, a := range row {
			if a != nil {
				a.Release()
			}
		}
	}
	for i, it := range items {
		if it.sleep > 0 {
			t := time.NewTimer(it.sleep)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				release()
				return nil, ctx.Err()
			}
		}
		if it.fail != nil {
			release()
			return nil, it.fail
		}
		if it.series {
			continue // produced below, batch by batch
		}
		b := array.NewBuilder(s.e.mem, it.typ.Arrow())
		var err error
		switch {
		case it.param >= 0:
			// Parameters arrive typed (TEXT when unknown); a cast of a
			// parameter is its type, so the value is used as is.
			col := pb.Column(it.param)
			if pt := paramType(pb, it.param); pt == it.typ {
				b.Release()
				col.Retain()
				row[i] = col
				continue
			}
			if col.IsNull(0) {
				b.AppendNull()
			} else {
				err = sqltypes.DecodeText(b, it.typ, string(sqltypes.EncodeText(nil, col, 0, paramType(pb, it.param), s.opts)), s.opts)
			}
		case it.null:
			b.AppendNull()
		default:
			err = sqltypes.DecodeText(b, it.typ, it.text, s.opts)
		}
		if err != nil {
			b.Release()
			release()
			return nil, err
		}
		row[i] = b.NewArray()
		b.Release()
	}
	if len(items) == 1 && items[0].series {
		release()
		cur, hi := items[0].lo, items[0].hi
		return &rowsResult{verb: "SELECT", next: func(ctx context.Context) (arrow.RecordBatch, error) {
			if cur > hi {
				return nil, io.EOF
			}
			n := min(hi-cur+1, 4096)
			b := array.NewInt64Builder(s.e.mem)
			defer b.Release()
			for k := int64(0); k < n; k++ {
				b.Append(cur + k)
			}
			cur += n
			s.e.Produced.Add(1)
			return oneBatch(cols, []arrow.Array{b.NewArray()}, n), nil
		}}, nil
	}
	rec := oneBatch(cols, row, 1)
	return sliceResult("SELECT", []arrow.RecordBatch{rec}), nil
}

// namePos is the 1-based character position of the first occurrence of
// name after FROM in the statement (TiDB does not record table name
// offsets).
func namePos(sql string, p *parser.Statement, name string) int {
	text := strings.ToLower(p.Text)
	from := strings.Index(text, "from")
	if from < 0 {
		return 0
	}
	i := strings.Index(text[from:], name)
	if i < 0 {
		return 0
	}
	return utf8.RuneCountInString(sql[:p.Start+from+i]) + 1
}

func paramType(pb arrow.RecordBatch, i int) sqltypes.Type {
	t, err := sqltypes.FromField(pb.Schema().Field(i))
	if err != nil {
		return sqltypes.TextType
	}
	return t
}
