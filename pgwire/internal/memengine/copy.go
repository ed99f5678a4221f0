package memengine

import (
	"bufio"
	"context"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/asofsql/asofsql/copyfmt"
	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/sql/parser"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

func (s *session) copyStmt(p *parser.Statement, n *parser.CopyStmt) (*stmt, error) {
	if n.Table == nil || n.Path != "" {
		return nil, errorf(sqlerr.FeatureNotSupported, "the test engine copies whole tables from STDIN or to STDOUT only")
	}
	name := n.Table.Name
	t, snap := s.e.snapshot(name)
	releaseAll(snap)
	if t == nil {
		return nil, errorf(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	if len(n.Columns) > 0 {
		// pgx CopyFrom names every column; a real subset needs defaults,
		// which the test engine does not have.
		same := len(n.Columns) == len(t.types)
		for i := 0; same && i < len(n.Columns); i++ {
			same = n.Columns[i] == t.schema.Field(i).Name
		}
		if !same {
			return nil, errorf(sqlerr.FeatureNotSupported, "the test engine copies all columns in table order only")
		}
	}
	if n.From {
		var f copyfmt.Format
		switch n.Format {
		case parser.CopyCSV:
			f = copyfmt.CSV
		case parser.CopyBinary:
			f = copyfmt.Binary
		case parser.CopyText, "":
			f = copyfmt.Text
		default:
			return nil, errorf(sqlerr.FeatureNotSupported, "COPY format %s is not supported by the test engine", n.Format)
		}
		opts := copyfmt.Options{Format: f, Header: n.Header, Table: name, Null: n.Null, Values: s.opts}
		if n.Delimiter != nil {
			if len(*n.Delimiter) != 1 {
				return nil, errorf(sqlerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
			}
			opts.Delimiter = (*n.Delimiter)[0]
		}
		return &stmt{run: func(context.Context, arrow.RecordBatch) (pgwire.Result, error) {
			return &copyIn{s: s, t: t, opts: opts}, nil
		}}, nil
	}
	if n.Format != parser.CopyText && n.Format != "" {
		return nil, errorf(sqlerr.FeatureNotSupported, "COPY TO format %s is not supported by the test engine", n.Format)
	}
	return &stmt{run: func(context.Context, arrow.RecordBatch) (pgwire.Result, error) {
		return &copyOut{s: s, t: t}, nil
	}}, nil
}

type copyIn struct {
	s    *session
	t    *table
	opts copyfmt.Options
	rows int64
}

func (c *copyIn) Next(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF }
func (c *copyIn) Tag(int64) string                                { return "COPY " + strconv.FormatInt(c.rows, 10) }
func (c *copyIn) Close() error                                    { return nil }
func (c *copyIn) CopyInFormat() pgwire.CopyFormat {
	return pgwire.CopyFormat{Binary: c.opts.Format == copyfmt.Binary, Columns: len(c.t.types)}
}

// CopyIn stages the rows; they are published when the transaction commits.
func (c *copyIn) CopyIn(ctx context.Context, r io.Reader) error {
	rd, err := copyfmt.NewReader(r, c.t.schema, c.opts, c.s.e.mem)
	if err != nil {
		return err
	}
	defer rd.Release()
	var got []arrow.RecordBatch
	for rd.Next() {
		if err := ctx.Err(); err != nil {
			releaseAll(got)
			return err
		}
		b := rd.RecordBatch()
		b.Retain()
		got = append(got, b)
		c.rows += b.NumRows()
	}
	if err := rd.Err(); err != nil {
		releaseAll(got)
		return err
	}
	c.s.pending = append(c.s.pending, staged{table: c.t.name, batches: got})
	return nil
}

type copyOut struct {
	s    *session
	t    *table
	rows int64
}

func (c *copyOut) Next(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF }
func (c *copyOut) Tag(int64) string                                { return "COPY " + strconv.FormatInt(c.rows, 10) }
func (c *copyOut) Close() error                                    { return nil }
func (c *copyOut) CopyOutFormat() pgwire.CopyFormat {
	return pgwire.CopyFormat{Columns: len(c.t.types)}
}

// CopyOut writes the committed rows in COPY's text format.
func (c *copyOut) CopyOut(ctx context.Context, w io.Writer) error {
	_, recs := c.s.e.snapshot(c.t.name)
	defer releaseAll(recs)
	bw := bufio.NewWriterSize(w, 32<<10)
	var line []byte
	for _, rec := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			line = line[:0]
			for j, ty := range c.t.types {
				if j > 0 {
					line = append(line, '\t')
				}
				col := rec.Column(j)
				if col.IsNull(i) {
					line = append(line, `\N`...)
					continue
				}
				line = copyfmt.AppendText(line, sqltypes.EncodeText(nil, col, i, ty, c.s.opts), '\t')
			}
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return err
			}
			c.rows++
		}
	}
	return bw.Flush()
}
