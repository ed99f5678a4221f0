package asofsql

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

func init() { sql.Register("asofsql", Driver{}) }

// Driver is the database/sql driver registered as "asofsql". The data
// source name is what Open takes: ":memory:", a directory or
// "file:<directory>". Every connection of one sql.DB shares one engine
// (so ":memory:" is one database per sql.DB, not per connection); each
// connection is a Session. Use OpenDB to reach an already open DB.
//
// Statements take $1..$n or ? placeholders (not both in one statement);
// results map to Go as sqltypes.GoValue does (time.Time for dates and
// timestamps, int64, float64, string, []byte, bool), NUMERIC and INTERVAL
// as their Postgres text. Transactions (db.BeginTx) are BEGIN/COMMIT
// blocks on the connection's session.
type Driver struct{}

var (
	_ driver.Driver        = Driver{}
	_ driver.DriverContext = Driver{}
)

// Open opens a connection on its own engine (database/sql uses
// OpenConnector instead, which shares one engine per sql.DB).
func (d Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	dc, err := c.Connect(context.Background())
	if err != nil {
		c.(*connector).Close()
		return nil, err
	}
	dc.(*conn).closeDB = true
	return dc, nil
}

// OpenConnector opens the database named by dsn once for all the
// connections of a sql.DB; sql.DB.Close closes it.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) { return NewConnector(dsn) }

// NewConnector opens the database named by dsn with opts (an allocator, a
// COPY file directory, ...) for sql.OpenDB; closing the sql.DB closes it.
func NewConnector(dsn string, opts ...Option) (driver.Connector, error) {
	db, err := Open(dsn, opts...)
	if err != nil {
		return nil, err
	}
	return &connector{db: db, owned: true}, nil
}

// OpenDB returns a database/sql handle on db: each of its connections is
// a Session of db. Closing the sql.DB leaves db open.
func OpenDB(db *DB) *sql.DB { return sql.OpenDB(&connector{db: db}) }

type connector struct {
	db    *DB
	owned bool
}

func (c *connector) Connect(context.Context) (driver.Conn, error) {
	return &conn{s: c.db.Session(), db: c.db}, nil
}

func (c *connector) Driver() driver.Driver { return Driver{} }

// Close is called by sql.DB.Close.
func (c *connector) Close() error {
	if c.owned {
		return c.db.Close()
	}
	return nil
}

type conn struct {
	s       *Session
	db      *DB
	closeDB bool
}

var (
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	q, err := placeholders(query)
	if err != nil {
		return nil, err
	}
	st, err := c.s.Prepare(ctx, q, nil)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "empty query")
	}
	return &stmt{c: c, st: st}, nil
}

func (c *conn) Close() error {
	err := c.s.Close()
	if c.closeDB {
		if cerr := c.db.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	begin := "BEGIN"
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadCommitted:
		begin += " ISOLATION LEVEL READ COMMITTED"
	case sql.LevelReadUncommitted:
		begin += " ISOLATION LEVEL READ UNCOMMITTED"
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "transaction isolation level %s is not supported",
			sql.IsolationLevel(opts.Isolation))
	}
	if opts.ReadOnly {
		begin += " READ ONLY"
	}
	if _, err := c.s.Exec(ctx, begin); err != nil {
		return nil, err
	}
	return &tx{c: c}, nil
}

// CheckNamedValue lets any value through to Bind, which knows the
// parameter types (database/sql's default conversion would turn, say, a
// sqltypes.Decimal into an error).
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if v, ok := nv.Value.(driver.Valuer); ok {
		val, err := v.Value()
		if err != nil {
			return err
		}
		nv.Value = val
	}
	return nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	q, err := placeholders(query)
	if err != nil {
		return nil, err
	}
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	res, err := c.s.Exec(ctx, q, vals...)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(res.RowsAffected), nil
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, err := placeholders(query)
	if err != nil {
		return nil, err
	}
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	st, err := c.s.parseOnce(ctx, q)
	if err != nil {
		return nil, err
	}
	cur, err := c.s.run(ctx, st, vals, false, nil)
	if err != nil {
		return nil, err
	}
	return newRows(cur, c.s.vopts), nil
}

func values(args []driver.NamedValue) ([]any, error) {
	out := make([]any, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "named parameter %q is not supported; use $n or ?", a.Name)
		}
		out[i] = a.Value
	}
	return out, nil
}

type stmt struct {
	c  *conn
	st *Stmt
}

var (
	_ driver.StmtExecContext  = (*stmt)(nil)
	_ driver.StmtQueryContext = (*stmt)(nil)
)

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return len(s.st.ParamTypes()) }

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	cur, err := s.st.Execute(ctx, vals...)
	if err != nil {
		return nil, err
	}
	if err := cur.drain(); err != nil {
		return nil, s.c.s.fail(err)
	}
	return driver.RowsAffected(affected(cur)), nil
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	cur, err := s.st.Execute(ctx, vals...)
	if err != nil {
		return nil, err
	}
	return newRows(cur, s.c.s.vopts), nil
}

type tx struct{ c *conn }

func (t *tx) Commit() error {
	res, err := t.c.s.Exec(context.Background(), "COMMIT")
	if err != nil {
		return err
	}
	if res.Tag == "ROLLBACK" {
		return sqlerr.New(sqlerr.InFailedSQLTransaction, "transaction rolled back: a statement in it failed")
	}
	return nil
}

func (t *tx) Rollback() error {
	_, err := t.c.s.Exec(context.Background(), "ROLLBACK")
	return err
}

// rows adapts a Cursor to driver.Rows, one row at a time.
type rows struct {
	cur   *Cursor
	cols  []Column
	opts  *sqltypes.Options
	batch arrow.RecordBatch
	i     int
}

var (
	_ driver.RowsColumnTypeDatabaseTypeName = (*rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*rows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*rows)(nil)
	_ driver.RowsColumnTypeLength           = (*rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*rows)(nil)
)

func newRows(c *Cursor, o *sqltypes.Options) *rows {
	return &rows{cur: c, cols: c.Columns(), opts: o}
}

func (r *rows) Columns() []string {
	names := make([]string, len(r.cols))
	for i, c := range r.cols {
		names[i] = c.Name
	}
	return names
}

func (r *rows) Close() error { return r.cur.Close() }

func (r *rows) Next(dest []driver.Value) error {
	for r.batch == nil || r.i >= int(r.batch.NumRows()) {
		if !r.cur.Next() {
			r.batch = nil
			if err := r.cur.Err(); err != nil {
				return err
			}
			return io.EOF
		}
		r.batch, r.i = r.cur.RecordBatch(), 0
	}
	for j, col := range r.batch.Columns() {
		t := r.cols[j].Type
		switch t.Kind {
		case sqltypes.Numeric, sqltypes.Interval:
			// No driver.Value type holds these exactly: give the
			// Postgres text, as lib/pq does.
			if col.IsNull(r.i) {
				dest[j] = nil
			} else {
				dest[j] = string(sqltypes.EncodeText(nil, col, r.i, t, r.opts))
			}
		default:
			dest[j] = sqltypes.GoValue(col, r.i, t)
		}
	}
	r.i++
	return nil
}

// ColumnTypeDatabaseTypeName uses the names lib/pq reports.
func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	return map[sqltypes.Kind]string{
		sqltypes.Bool: "BOOL", sqltypes.Int2: "INT2", sqltypes.Int4: "INT4", sqltypes.Int8: "INT8",
		sqltypes.Float4: "FLOAT4", sqltypes.Float8: "FLOAT8", sqltypes.Numeric: "NUMERIC", sqltypes.Text: "TEXT",
		sqltypes.Varchar: "VARCHAR", sqltypes.Bytea: "BYTEA", sqltypes.Date: "DATE", sqltypes.Timestamp: "TIMESTAMP",
		sqltypes.TimestampTZ: "TIMESTAMPTZ", sqltypes.Interval: "INTERVAL", sqltypes.Unknown: "UNKNOWN",
	}[r.cols[i].Type.Kind]
}

func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	switch r.cols[i].Type.Kind {
	case sqltypes.Bool:
		return reflect.TypeFor[bool]()
	case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8:
		return reflect.TypeFor[int64]()
	case sqltypes.Float4, sqltypes.Float8:
		return reflect.TypeFor[float64]()
	case sqltypes.Bytea:
		return reflect.TypeFor[[]byte]()
	case sqltypes.Date, sqltypes.Timestamp, sqltypes.TimestampTZ:
		return reflect.TypeFor[time.Time]()
	}
	return reflect.TypeFor[string]()
}

func (r *rows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	t := r.cols[i].Type
	if t.Kind != sqltypes.Numeric {
		return 0, 0, false
	}
	return int64(t.Precision), int64(t.Scale), true
}

func (r *rows) ColumnTypeLength(i int) (int64, bool) {
	t := r.cols[i].Type
	if t.Kind == sqltypes.Varchar && t.Length > 0 {
		return int64(t.Length), true
	}
	return 0, false
}

// ColumnTypeNullable: nullability is not tracked through expressions.
func (r *rows) ColumnTypeNullable(int) (bool, bool) { return true, false }

// placeholders rewrites ? placeholders to $1, $2, ... in text order,
// skipping string literals, quoted identifiers, dollar quotes and
// comments. A statement with both styles is refused (42601).
func placeholders(q string) (string, error) {
	if !strings.Contains(q, "?") {
		return q, nil
	}
	var sb strings.Builder
	n, dollar := 0, false
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := skipQuoted(q, i, c, c == '\'' && i > 0 && (q[i-1] == 'E' || q[i-1] == 'e') && !identChar(q, i-2))
			sb.WriteString(q[i:j])
			i = j
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			sb.WriteString(q[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j, depth := i+2, 1
			for j < len(q) && depth > 0 {
				switch {
				case strings.HasPrefix(q[j:], "/*"):
					depth, j = depth+1, j+2
				case strings.HasPrefix(q[j:], "*/"):
					depth, j = depth-1, j+2
				default:
					j++
				}
			}
			sb.WriteString(q[i:j])
			i = j
		case c == '$' && !identChar(q, i-1):
			j := i + 1
			for j < len(q) && (q[j] >= '0' && q[j] <= '9') {
				j++
			}
			if j > i+1 { // $n
				dollar = true
				sb.WriteString(q[i:j])
				i = j
				continue
			}
			for j < len(q) && (identChar(q, j) && !(q[j] >= '0' && q[j] <= '9' && j == i+1)) {
				j++
			}
			if j < len(q) && q[j] == '$' { // $tag$ ... $tag$
				tag := q[i : j+1]
				end := strings.Index(q[j+1:], tag)
				if end < 0 {
					end = len(q) - j - 1 - len(tag)
				}
				stop := j + 1 + end + len(tag)
				sb.WriteString(q[i:stop])
				i = stop
				continue
			}
			sb.WriteByte(c)
			i++
		case c == '?':
			n++
			sb.WriteString("$" + strconv.Itoa(n))
			i++
		default:
			sb.WriteByte(c)
			i++
		}
	}
	if n > 0 && dollar {
		return "", sqlerr.New(sqlerr.SyntaxError, "cannot mix ? and $n parameters in one statement")
	}
	return sb.String(), nil
}

func identChar(q string, i int) bool {
	if i < 0 || i >= len(q) {
		return false
	}
	c := q[i]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// skipQuoted returns the index just past the quoted token starting at i
// (doubled quotes stay inside; backslash escapes too in E'...').
func skipQuoted(q string, i int, quote byte, backslash bool) int {
	j := i + 1
	for j < len(q) {
		switch {
		case backslash && q[j] == '\\':
			j += 2
		case q[j] == quote && j+1 < len(q) && q[j+1] == quote:
			j += 2
		case q[j] == quote:
			return j + 1
		default:
			j++
		}
	}
	return len(q)
}
