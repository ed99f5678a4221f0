package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/server"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// AsofDB is an in-memory asofsql database holding one dataset's tables,
// shared by the engines that go through SQL (embedded or wire). Its
// allocator should be the probe's, so a run's Arrow peak is measured.
type AsofDB struct {
	mem    memory.Allocator
	db     *asofsql.DB
	loaded *Dataset
	srv    *pgwire.Server
	addr   string
	done   chan error
}

// NewAsofDB returns an empty holder; the database opens on first Load.
func NewAsofDB(mem memory.Allocator) *AsofDB { return &AsofDB{mem: mem} }

// Load replaces the database with one holding ds's inputs as tables (the
// ASOF inputs ORDER BY (t), as the planner needs to prove their order),
// filled with COPY ... FROM STDIN (CSV). A no-op when ds is loaded.
func (a *AsofDB) Load(ctx context.Context, ds *Dataset) error {
	if a.loaded == ds {
		return nil
	}
	if err := a.Close(); err != nil {
		return err
	}
	db, err := asofsql.Open(":memory:", asofsql.WithAllocator(a.mem))
	if err != nil {
		return err
	}
	a.db = db
	s := db.Session()
	defer s.Close()
	ins := []Input{ds.Left}
	ins = append(ins, ds.Rights...)
	for _, in := range ins {
		var cols []string
		for _, f := range in.Schema.Fields() {
			t, err := sqlType(f.Type)
			if err != nil {
				return err
			}
			cols = append(cols, f.Name+" "+t)
		}
		ddl := fmt.Sprintf("CREATE TABLE %s (%s)", in.Name, strings.Join(cols, ", "))
		if !ds.Shape.IsQuery() {
			ddl += " ORDER BY (t)"
		}
		if _, err := s.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("asofsql: %s: %w", ddl, err)
		}
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeCSV(pw, in)) }()
		_, err := s.CopyFrom(ctx, "COPY "+in.Name+" FROM STDIN WITH (FORMAT csv)", pr)
		pr.CloseWithError(io.ErrClosedPipe)
		if err != nil {
			return fmt.Errorf("load %s into asofsql: %w", in.Name, err)
		}
	}
	a.loaded = ds
	return nil
}

func sqlType(t arrow.DataType) (string, error) {
	switch t.ID() {
	case arrow.INT64:
		return "BIGINT", nil
	case arrow.FLOAT64:
		return "DOUBLE PRECISION", nil
	case arrow.STRING:
		return "TEXT", nil
	}
	return "", sqlerr.New(sqlerr.FeatureNotSupported, "no SQL type for generated column type %s", t)
}

// writeCSV writes an input's rows as CSV (floats in their shortest exact
// form; the generator's strings need no quoting).
func writeCSV(w io.Writer, in Input) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var line []byte
	for _, b := range in.Batches {
		for i := 0; i < int(b.NumRows()); i++ {
			line = line[:0]
			for j, c := range b.Columns() {
				if j > 0 {
					line = append(line, ',')
				}
				switch c := c.(type) {
				case *array.Int64:
					line = strconv.AppendInt(line, c.Value(i), 10)
				case *array.Float64:
					line = strconv.AppendFloat(line, c.Value(i), 'g', -1, 64)
				case *array.String:
					line = append(line, c.Value(i)...)
				default:
					return sqlerr.New(sqlerr.FeatureNotSupported, "cannot write %s as CSV", c.DataType())
				}
			}
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// Addr starts the wire server on a loopback port (once) and returns its
// address.
func (a *AsofDB) Addr() (string, error) {
	if a.srv != nil {
		return a.addr, nil
	}
	if a.db == nil {
		return "", sqlerr.New(sqlerr.InternalError, "wire server started before a dataset was loaded")
	}
	srv, err := server.New(a.db, pgwire.Config{})
	if err != nil {
		return "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	a.srv, a.addr, a.done = srv, l.Addr().String(), make(chan error, 1)
	go func() { a.done <- srv.Serve(l) }()
	return a.addr, nil
}

// Close stops the server and closes the database.
func (a *AsofDB) Close() error {
	var err error
	if a.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = a.srv.Shutdown(ctx)
		cancel()
		<-a.done
		a.srv = nil
	}
	if a.db != nil {
		if cerr := a.db.Close(); err == nil {
			err = cerr
		}
		a.db = nil
	}
	a.loaded = nil
	return err
}

// SQLEngine runs a shape's SQL through asofsql's embedded API (DB.Query)
// over the tables loaded in its catalog, keeping every result batch until
// the run ends (the materialised result, as DuckDB's CREATE TABLE AS
// keeps its). For ASOF shapes it runs DuckDB's join text (JoinSQL), which
// asofsql also accepts, on the shapes marked Wire.
type SQLEngine struct {
	DB    *AsofDB
	query string
	ds    *Dataset
}

var _ Engine = (*SQLEngine)(nil)

func (e *SQLEngine) Name() string { return "asofsql SQL" }

// Supports: the operator shapes, and the ASOF shapes marked Wire.
func (e *SQLEngine) Supports(s Shape) bool { return s.IsQuery() || s.Wire }

func (e *SQLEngine) Prepare(ctx context.Context, ds *Dataset) error {
	q, err := ShapeSQL(ds.Shape)
	if err != nil {
		return err
	}
	e.query, e.ds = q, ds
	return e.DB.Load(ctx, ds)
}

// Finish forgets the dataset; the AsofDB's owner closes the database
// after every engine using it has finished.
func (e *SQLEngine) Finish() error {
	e.ds = nil
	return nil
}

func (e *SQLEngine) Run(ctx context.Context, p *Probe) (Measure, Summary, error) {
	var out []arrow.RecordBatch
	defer func() {
		for _, b := range out {
			b.Release()
		}
	}()
	p.Allocator() // the database allocates through the probe's allocator
	p.Begin()
	rdr, err := e.DB.db.Query(ctx, e.query)
	if err == nil {
		for rdr.Next() {
			b := rdr.RecordBatch()
			b.Retain()
			out = append(out, b)
		}
		err = rdr.Err()
		rdr.Release()
	}
	m := p.End()
	if err != nil {
		return m, Summary{}, fmt.Errorf("asofsql: %w", err)
	}
	sum, err := summarizeBatches(e.ds.Shape, out)
	return m, sum, err
}

// summarizeBatches checks a shape's result as asofsql returns it.
func summarizeBatches(s Shape, out []arrow.RecordBatch) (Summary, error) {
	if s.IsQuery() {
		z := NewQuerySummarizer(s.Query)
		for _, b := range out {
			if err := z.Add(b); err != nil {
				return Summary{}, err
			}
		}
		return z.Summary(), nil
	}
	z := NewSummarizer(s.Rights, 3)
	for _, b := range out {
		if err := z.Add(b); err != nil {
			return Summary{}, err
		}
	}
	return z.Summary(), nil
}

// ShapeSQL is the SQL text both engines run for a shape.
func ShapeSQL(s Shape) (string, error) {
	if s.IsQuery() {
		return s.Query.SQL(s.Left), nil
	}
	return JoinSQL(s)
}

// WireEngine runs a single-right ASOF shape's join through asofsql's
// Postgres wire server with pgx (extended protocol, a prepared
// statement), with binary or text result columns. The client decodes
// every value into Go values (pgtype) and folds it into the summary as it
// reads, the way an application consumes a result; it keeps no rows. Time
// and CPU include server and client, which share the process.
type WireEngine struct {
	DB     *AsofDB
	Binary bool
	conn   *pgx.Conn
	query  string
	shape  Shape
}

var _ Engine = (*WireEngine)(nil)

func (e *WireEngine) Name() string {
	if e.Binary {
		return "asofsql wire binary"
	}
	return "asofsql wire text"
}

// Supports: the ASOF shapes marked Wire with one right input.
func (e *WireEngine) Supports(s Shape) bool { return s.Wire && !s.IsQuery() && s.Rights == 1 }

func (e *WireEngine) Prepare(ctx context.Context, ds *Dataset) error {
	q, err := JoinSQL(ds.Shape)
	if err != nil {
		return err
	}
	if err := e.DB.Load(ctx, ds); err != nil {
		return err
	}
	addr, err := e.DB.Addr()
	if err != nil {
		return err
	}
	if e.conn != nil {
		e.conn.Close(ctx)
	}
	e.conn, err = pgx.Connect(ctx, "postgres://bench@"+addr+"/asofsql?sslmode=disable")
	if err != nil {
		return fmt.Errorf("pgx connect: %w", err)
	}
	e.query, e.shape = q, ds.Shape
	return nil
}

// Finish closes the connection (before the AsofDB's owner closes the
// database and its server).
func (e *WireEngine) Finish() error {
	if e.conn == nil {
		return nil
	}
	err := e.conn.Close(context.Background())
	e.conn = nil
	return err
}

func (e *WireEngine) Run(ctx context.Context, p *Probe) (Measure, Summary, error) {
	format := int16(pgx.TextFormatCode)
	if e.Binary {
		format = pgx.BinaryFormatCode
	}
	p.Allocator()
	p.Begin()
	sum, err := e.read(ctx, format)
	m := p.End()
	return m, sum, err
}

func (e *WireEngine) read(ctx context.Context, format int16) (Summary, error) {
	rows, err := e.conn.Query(ctx, e.query, pgx.QueryResultFormats{format})
	if err != nil {
		return Summary{}, fmt.Errorf("pgx: %w", err)
	}
	defer rows.Close()
	s := Summary{Nulls: make([]int64, 1), Sums: make([]Sum128, 1)}
	var t, k int64
	var lp float64
	var rt pgtype.Int8
	var rp pgtype.Float8
	for rows.Next() {
		if err := rows.Scan(&t, &k, &lp, &rt, &rp); err != nil {
			return Summary{}, fmt.Errorf("pgx scan: %w", err)
		}
		s.Rows++
		if !rp.Valid {
			s.Nulls[0]++
			continue
		}
		if !rt.Valid {
			continue
		}
		if err := s.Sums[0].checksumTerm(t, rt.Int64, rp.Float64); err != nil {
			return Summary{}, err
		}
	}
	if err := rows.Err(); err != nil {
		return Summary{}, fmt.Errorf("pgx: %w", err)
	}
	return s, nil
}
