package flightsql

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Prepared statements are kept by the server (their SQL and description)
// until closed or until the connection that created them closes. Bound
// parameters live in the handle instead: binding (DoPut with
// CommandPreparedStatementQuery) returns a new handle that carries the
// parameter rows, so several clients can bind and run one statement at
// once without racing.
//
// Handle format: "asop" | version 1 | 16-byte id | optional Arrow IPC
// stream of the bound parameter rows.

const (
	handleMagic = "asop"
	// maxHandleBytes bounds the parameters one handle carries; bulk data
	// belongs in an ingest.
	maxHandleBytes = 1 << 20
)

// prepared is a statement prepared by ActionCreatePreparedStatement.
type prepared struct {
	id    string
	owner string
	txnID []byte // the transaction it was prepared in; nil for none
	sql   string
	desc  description
}

func encodeHandle(id string, params []byte) []byte {
	h := make([]byte, 0, len(handleMagic)+1+len(id)+len(params))
	h = append(h, handleMagic...)
	h = append(h, ticketVersion)
	h = append(h, id...)
	return append(h, params...)
}

// lookupPrepared resolves a handle to its statement and bound parameter
// rows.
func (h *handler) lookupPrepared(ctx context.Context, handle []byte) (*prepared, [][]any, error) {
	n := len(handleMagic) + 1 + 16
	if len(handle) < n || string(handle[:len(handleMagic)]) != handleMagic || handle[len(handleMagic)] != ticketVersion {
		return nil, nil, sqlerr.New(sqlerr.ProtocolViolation, "malformed prepared statement handle")
	}
	id := string(handle[len(handleMagic)+1 : n])
	h.mu.Lock()
	p := h.prepared[id]
	h.mu.Unlock()
	if p == nil || p.owner != userOf(ctx) {
		return nil, nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement does not exist").
			WithDetail("It was closed, or the connection that prepared it closed.")
	}
	if len(handle) == n {
		return p, nil, nil
	}
	rdr, err := ipc.NewReader(bytes.NewReader(handle[n:]), ipc.WithAllocator(h.mem))
	if err != nil {
		return nil, nil, sqlerr.New(sqlerr.ProtocolViolation, "malformed prepared statement handle: %v", err)
	}
	defer rdr.Release()
	rows, err := paramRows(h.mem, rdr)
	if err != nil {
		return nil, nil, err
	}
	return p, rows, nil
}

// CreatePreparedStatement analyses a statement (ActionCreatePreparedStatement):
// its parameter and result schemas are known before it runs. A string of
// several statements is accepted without parameters; it runs as a whole
// and its shape is unknown until then.
func (h *handler) CreatePreparedStatement(ctx context.Context, req afsql.ActionCreatePreparedStatementRequest) (afsql.ActionCreatePreparedStatementResult, error) {
	var out afsql.ActionCreatePreparedStatementResult
	c, err := connOf(ctx)
	if err != nil {
		return out, err
	}
	sess, err := h.scope(ctx, req.GetTransactionId())
	if err != nil {
		return out, err
	}
	d, err := h.describe(ctx, sess, req.GetQuery())
	if err != nil {
		return out, err
	}
	p := &prepared{id: newID(), owner: userOf(ctx), txnID: req.GetTransactionId(), sql: req.GetQuery(), desc: d}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return out, errSessionClosed
	}
	if len(c.prepared) >= maxPreparedPerConn {
		c.mu.Unlock()
		return out, sqlerr.New("54000", "too many prepared statements on this connection (%d)", maxPreparedPerConn).
			WithHint("Close prepared statements that are no longer used.")
	}
	c.prepared[p.id] = p
	c.mu.Unlock()
	h.mu.Lock()
	h.prepared[p.id] = p
	h.mu.Unlock()
	out.Handle = encodeHandle(p.id, nil)
	out.ParameterSchema = d.params
	out.DatasetSchema = d.dataset
	if !d.script {
		isUpdate := d.dataset == nil
		out.IsUpdate = &isUpdate
	}
	return out, nil
}

// maxPreparedPerConn bounds the prepared statements one connection keeps.
const maxPreparedPerConn = 10_000

// ClosePreparedStatement forgets a prepared statement.
func (h *handler) ClosePreparedStatement(ctx context.Context, req afsql.ActionClosePreparedStatementRequest) error {
	p, _, err := h.lookupPrepared(ctx, req.GetPreparedStatementHandle())
	if err != nil {
		return err
	}
	h.mu.Lock()
	delete(h.prepared, p.id)
	h.mu.Unlock()
	if c, err := connOf(ctx); err == nil {
		c.mu.Lock()
		delete(c.prepared, p.id)
		c.mu.Unlock()
	}
	return nil
}

// GetFlightInfoPreparedStatement runs a prepared query with the
// parameters its handle carries (each row once, results one after
// another).
func (h *handler) GetFlightInfoPreparedStatement(ctx context.Context, cmd afsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, args, err := h.lookupPrepared(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	sess, err := h.scope(ctx, p.txnID)
	if err != nil {
		return nil, err
	}
	r, err := h.start(ctx, sess, p.sql, args, &p.desc)
	if err != nil {
		return nil, err
	}
	return h.register(r, desc)
}

// GetSchemaPreparedStatement returns a prepared query's result schema.
func (h *handler) GetSchemaPreparedStatement(ctx context.Context, cmd afsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	p, _, err := h.lookupPrepared(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	return h.schemaResult(p.desc.dataset), nil
}

// DoPutPreparedStatementQuery binds parameters: the rows sent become part
// of the returned handle.
func (h *handler) DoPutPreparedStatementQuery(ctx context.Context, cmd afsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	p, _, err := h.lookupPrepared(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, err
	}
	schema := rdr.Schema()
	if schema == nil {
		return nil, readErr(rdr.Err())
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(h.mem))
	rows := 0
	for rdr.Next() {
		b := rdr.RecordBatch()
		rows += int(b.NumRows())
		if err := w.Write(b); err != nil {
			w.Close()
			return nil, err
		}
		if buf.Len() > maxHandleBytes {
			w.Close()
			return nil, sqlerr.New("54000", "bound parameters exceed %d bytes", maxHandleBytes).
				WithHint("Load bulk data with an ingest (CommandStatementIngest).")
		}
	}
	if err := rdr.Err(); err != nil {
		w.Close()
		return nil, readErr(err)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if rows == 0 || schema.NumFields() == 0 {
		return encodeHandle(p.id, nil), nil
	}
	return encodeHandle(p.id, buf.Bytes()), nil
}

// DoPutPreparedStatementUpdate runs a prepared statement without a
// result once per parameter row sent (all in one transaction), or once
// with the parameters bound to the handle.
func (h *handler) DoPutPreparedStatementUpdate(ctx context.Context, cmd afsql.PreparedStatementUpdate, rdr flight.MessageReader) (int64, error) {
	p, bound, err := h.lookupPrepared(ctx, cmd.GetPreparedStatementHandle())
	if err != nil {
		return 0, err
	}
	rows, err := paramRows(h.mem, rdr)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		rows = bound
	}
	sess, err := h.scope(ctx, p.txnID)
	if err != nil {
		return 0, err
	}
	return h.update(ctx, sess, p.sql, rows, &p.desc)
}

// maxParamRows bounds the parameter rows of one execution.
const maxParamRows = 1 << 20

// paramRows reads parameter batches into rows of Go values (one per
// parameter, in field order). Any Arrow type that converts to a SQL type
// is accepted; the engine then checks each value against its parameter's
// type. A schema without fields, or no rows, means no parameters.
func paramRows(mem memory.Allocator, rdr array.RecordReader) ([][]any, error) {
	schema := rdr.Schema()
	if schema == nil {
		return nil, readErr(rdr.Err())
	}
	var rows [][]any
	for rdr.Next() {
		b := rdr.RecordBatch()
		if b.NumCols() == 0 {
			continue
		}
		if len(rows)+int(b.NumRows()) > maxParamRows {
			return nil, sqlerr.New("54000", "more than %d parameter rows", maxParamRows)
		}
		cols := make([][]any, b.NumCols())
		for j, col := range b.Columns() {
			vals, err := goValues(mem, col, schema.Field(j), j)
			if err != nil {
				return nil, err
			}
			cols[j] = vals
		}
		for i := 0; i < int(b.NumRows()); i++ {
			row := make([]any, len(cols))
			for j := range cols {
				row[j] = cols[j][i]
			}
			rows = append(rows, row)
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, readErr(err)
	}
	return rows, nil
}

// goValues converts a parameter column to Go values, casting Arrow types
// the engine stores differently (int8, date64, dictionaries, ...) first.
func goValues(mem memory.Allocator, col arrow.Array, f arrow.Field, j int) ([]any, error) {
	out := make([]any, col.Len())
	if col.DataType().ID() == arrow.NULL {
		return out, nil
	}
	t, err := sqltypes.FromField(f)
	if err != nil {
		t, err = sqltypes.FromArrow(col.DataType())
	}
	if err != nil {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "parameter $%d: Arrow type %s has no SQL equivalent", j+1, col.DataType())
	}
	if !arrow.TypeEqual(col.DataType(), t.Arrow()) {
		cast, err := compute.CastArray(exec.WithAllocator(context.Background(), mem), col, compute.SafeCastOptions(t.Arrow()))
		if err != nil {
			return nil, sqlerr.Wrap(err, sqlerr.DatatypeMismatch, "parameter $%d: Arrow %s does not convert to %s: %v", j+1, col.DataType(), t, err)
		}
		defer cast.Release()
		col = cast
	}
	for i := range out {
		out[i] = sqltypes.GoValue(col, i, t)
	}
	return out, nil
}

// readErr labels a failure to read a client's Arrow stream.
func readErr(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return sqlerr.New(sqlerr.ProtocolViolation, "the Arrow stream has no schema")
	}
	if _, ok := sqlerr.As(err); ok {
		return err
	}
	return sqlerr.Wrap(err, sqlerr.ProtocolViolation, "malformed Arrow stream: %v", err)
}
