package sqllogic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Conn is one front door to the engine: a connection whose statements
// see each other's effects (settings, transaction blocks).
type Conn interface {
	// Exec runs one or more statements, discarding any rows, and returns
	// the last one's command tag ("" where the front door has none: Flight
	// SQL).
	Exec(ctx context.Context, sql string) (string, error)
	// Query runs one statement and returns its rows as Postgres text
	// output; a NULL is reported as nil.
	Query(ctx context.Context, sql string) ([][]*string, error)
	// CopyIn runs COPY ... FROM STDIN reading data; CopyOut runs COPY ...
	// TO STDOUT and returns the stream.
	CopyIn(ctx context.Context, sql string, data io.Reader) error
	CopyOut(ctx context.Context, sql string) (string, error)
	Close() error
}

// Embedded is a Conn over a session of the embedded API.
type Embedded struct {
	S *asofsql.Session
}

// Exec runs sql through Session.Exec.
func (e *Embedded) Exec(ctx context.Context, sql string) (string, error) {
	r, err := e.S.Exec(ctx, sql)
	return r.Tag, err
}

// Query runs sql through Session.Query and encodes each value with
// sqltypes.EncodeText and the session's settings, as the wire server does.
func (e *Embedded) Query(ctx context.Context, sql string) ([][]*string, error) {
	cur, err := e.S.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer cur.Release()
	cols := cur.Columns()
	var rows [][]*string
	var buf []byte
	for cur.Next() {
		b := cur.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			row := make([]*string, len(cols))
			for j, c := range cols {
				a := b.Column(j)
				if a.IsNull(i) {
					continue
				}
				buf = sqltypes.EncodeText(buf[:0], a, i, c.Type, e.S.ValueOptions())
				s := string(buf)
				row[j] = &s
			}
			rows = append(rows, row)
		}
	}
	return rows, cur.Err()
}

// CopyIn runs sql through Session.CopyFrom.
func (e *Embedded) CopyIn(ctx context.Context, sql string, data io.Reader) error {
	_, err := e.S.CopyFrom(ctx, sql, data)
	return err
}

// CopyOut runs sql through Session.CopyTo.
func (e *Embedded) CopyOut(ctx context.Context, sql string) (string, error) {
	var b strings.Builder
	_, err := e.S.CopyTo(ctx, sql, &b)
	return b.String(), err
}

// Close ends the session.
func (e *Embedded) Close() error { return e.S.Close() }

// Wire is a Conn over a pgx connection to a Postgres wire server (asofsql's,
// or a real PostgreSQL for checking expectations). Statements go through
// the simple protocol (one Query message), or with Extended through the
// extended one (Parse, Bind, Describe, Execute, Sync: one statement a
// record); either way results arrive in text format exactly as the
// server writes them.
type Wire struct {
	C        *pgx.Conn
	Extended bool
}

// DialWire connects to dsn with pgx.
func DialWire(ctx context.Context, dsn string) (*Wire, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Wire{C: c}, nil
}

// Exec runs sql as one simple Query message (or one extended-protocol
// round trip).
func (w *Wire) Exec(ctx context.Context, sql string) (string, error) {
	res, err := w.run(ctx, sql)
	if err != nil || len(res) == 0 {
		return "", wireErr(err)
	}
	return res[len(res)-1].CommandTag.String(), nil
}

func (w *Wire) run(ctx context.Context, sql string) ([]*pgconn.Result, error) {
	if w.Extended {
		r := w.C.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil).Read()
		return []*pgconn.Result{r}, r.Err
	}
	return w.C.PgConn().Exec(ctx, sql).ReadAll()
}

// Query runs sql and returns the raw text values of its rows.
func (w *Wire) Query(ctx context.Context, sql string) ([][]*string, error) {
	res, err := w.run(ctx, sql)
	if err != nil {
		return nil, wireErr(err)
	}
	if len(res) != 1 {
		return nil, fmt.Errorf("query gave %d results, want 1", len(res))
	}
	rows := make([][]*string, 0, len(res[0].Rows))
	for _, r := range res[0].Rows {
		row := make([]*string, len(r))
		for j, v := range r {
			if v != nil {
				s := string(v)
				row[j] = &s
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// CopyIn sends data with the COPY sub-protocol (CopyData, CopyDone).
func (w *Wire) CopyIn(ctx context.Context, sql string, data io.Reader) error {
	_, err := w.C.PgConn().CopyFrom(ctx, data, sql)
	return wireErr(err)
}

// CopyOut collects the CopyData messages of a COPY ... TO STDOUT.
func (w *Wire) CopyOut(ctx context.Context, sql string) (string, error) {
	var b strings.Builder
	_, err := w.C.PgConn().CopyTo(ctx, &b, sql)
	return b.String(), wireErr(err)
}

// Close closes the connection.
func (w *Wire) Close() error { return w.C.Close(context.Background()) }

// wireErr turns a server's ErrorResponse into a *sqlerr.Error, so both
// modes report errors the same way.
func wireErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		e := sqlerr.New(pe.Code, "%s", pe.Message)
		if pe.Hint != "" {
			e = e.WithHint("%s", pe.Hint)
		}
		if pe.Detail != "" {
			e = e.WithDetail("%s", pe.Detail)
		}
		if pe.Position != 0 {
			e = e.WithPosition(int(pe.Position))
		}
		return e
	}
	return err
}

// ErrorText is what a "statement error <regex>" is matched against:
// "SQLSTATE: message", then " DETAIL: ...", " HINT: ..." and " POSITION: n"
// (1-based character offset) when present.
func ErrorText(err error) string {
	var b strings.Builder
	if e, ok := sqlerr.As(err); ok {
		fmt.Fprintf(&b, "%s: %s", e.Code, e.Message)
		if e.Detail != "" {
			fmt.Fprintf(&b, " DETAIL: %s", e.Detail)
		}
		if e.Hint != "" {
			fmt.Fprintf(&b, " HINT: %s", e.Hint)
		}
		if e.Position != 0 {
			fmt.Fprintf(&b, " POSITION: %d", e.Position)
		}
		return b.String()
	}
	return err.Error()
}
