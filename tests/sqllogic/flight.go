package sqllogic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/sqltypes"
)

// Flight is a Conn over arrow-go's Flight SQL client connected to
// asofsql's Flight SQL server (one gRPC connection: one server session).
// Exec sends CommandStatementUpdate, Query CommandStatementQuery and reads
// the Arrow stream; values are rendered as the wire server renders them
// (sqltypes.EncodeText of each column's SQL type from the field metadata,
// in the session's TimeZone and extra_float_digits, read with SHOW when a
// result needs them). The protocol has no COPY streams: CopyIn and CopyOut
// report errors.ErrUnsupported.
type Flight struct {
	C *afsql.Client
}

// DialFlight connects to a Flight SQL server on addr without TLS or
// credentials (trust, loopback).
func DialFlight(ctx context.Context, addr string) (*Flight, error) {
	c, err := afsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	return &Flight{C: c}, nil
}

// Exec runs sql (one or more statements) as an update.
// Flight SQL answers an update with its row count only, not a command tag:
// the tag is "" (unknown), and the runner's tag check does not apply.
func (f *Flight) Exec(ctx context.Context, sql string) (string, error) {
	_, err := f.C.ExecuteUpdate(ctx, sql)
	return "", flightErr(err)
}

// Query runs sql and renders its rows as Postgres text.
func (f *Flight) Query(ctx context.Context, sql string) ([][]*string, error) {
	batches, err := f.fetch(ctx, sql)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if err != nil || len(batches) == 0 {
		return nil, err
	}
	schema := batches[0].Schema()
	types := make([]sqltypes.Type, schema.NumFields())
	needOpts := false
	for i, fld := range schema.Fields() {
		t, err := sqltypes.FromField(fld)
		if err != nil {
			return nil, err
		}
		types[i] = t
		switch t.Kind {
		case sqltypes.TimestampTZ, sqltypes.Float4, sqltypes.Float8:
			needOpts = true
		}
	}
	opts := sqltypes.DefaultOptions()
	if needOpts {
		if opts, err = f.options(ctx); err != nil {
			return nil, err
		}
	}
	var rows [][]*string
	var buf []byte
	for _, b := range batches {
		for i := 0; i < int(b.NumRows()); i++ {
			row := make([]*string, len(types))
			for j, t := range types {
				a := b.Column(j)
				if a.IsNull(i) {
					continue
				}
				buf = sqltypes.EncodeText(buf[:0], a, i, t, opts)
				s := string(buf)
				row[j] = &s
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// fetch runs sql and reads every endpoint of its result.
func (f *Flight) fetch(ctx context.Context, sql string) ([]arrow.RecordBatch, error) {
	info, err := f.C.Execute(ctx, sql)
	if err != nil {
		return nil, flightErr(err)
	}
	var out []arrow.RecordBatch
	for _, ep := range info.Endpoint {
		rdr, err := f.C.DoGet(ctx, ep.Ticket)
		if err != nil {
			return out, flightErr(err)
		}
		for rdr.Next() {
			b := rdr.RecordBatch()
			b.Retain()
			out = append(out, b)
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return out, flightErr(err)
		}
	}
	return out, nil
}

// options reads the settings that shape value text from the session.
func (f *Flight) options(ctx context.Context) (*sqltypes.Options, error) {
	opts := sqltypes.DefaultOptions()
	show := func(name string) (string, error) {
		bs, err := f.fetch(ctx, "SHOW "+name)
		defer func() {
			for _, b := range bs {
				b.Release()
			}
		}()
		if err != nil {
			return "", err
		}
		if len(bs) == 0 || bs[0].NumRows() != 1 {
			return "", fmt.Errorf("SHOW %s gave no row", name)
		}
		return bs[0].Column(0).ValueStr(0), nil
	}
	tz, err := show("TimeZone")
	if err != nil {
		return nil, err
	}
	if opts.Location, err = sqltypes.ParseTimeZone(tz); err != nil {
		return nil, err
	}
	digits, err := show("extra_float_digits")
	if err != nil {
		return nil, err
	}
	if opts.ExtraFloatDigits, err = strconv.Atoi(digits); err != nil {
		return nil, err
	}
	return opts, nil
}

// CopyIn is not available over Flight SQL.
func (f *Flight) CopyIn(context.Context, string, io.Reader) error { return errors.ErrUnsupported }

// CopyOut is not available over Flight SQL.
func (f *Flight) CopyOut(context.Context, string) (string, error) { return "", errors.ErrUnsupported }

// Close closes the connection.
func (f *Flight) Close() error { return f.C.Close() }

// flightErr turns the server's status into its *sqlerr.Error, so every
// mode reports errors the same way.
func flightErr(err error) error {
	if e, ok := flightsql.ErrorOf(err); ok {
		return e
	}
	return err
}
