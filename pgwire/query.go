package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// prepared is a statement made by Parse (or one statement of a simple
// query). stmt is nil for an empty query string.
type prepared struct {
	name   string
	stmt   Statement
	params []sqltypes.Type
	cols   []Column
	// paramSchema is the schema of the Bind parameters' batch, made at
	// the first Bind and the same for every later one.
	paramSchema *arrow.Schema
	// spare is an unnamed portal of this statement that a Bind replaced,
	// closed and no longer in the portals, which the next Bind reuses
	// with its values' slice: a client binding one prepared statement
	// per row allocates neither.
	spare *portal
}

func newPrepared(name string, st Statement) *prepared {
	p := &prepared{name: name, stmt: st}
	if st != nil {
		p.params = st.ParamTypes()
		p.cols = st.Columns()
	}
	return p
}

func (p *prepared) close() {
	if p.stmt != nil {
		p.stmt.Close()
	}
}

// portal is a bound statement and, once executed, its running result. A
// batch cut short by MaxRows stays pending for the next Execute.
type portal struct {
	name   string
	ps     *prepared
	params arrow.RecordBatch // owned; nil without parameters or with vals
	// vals are the parameters decoded as values, for a ValuesStatement
	// (params.go); nil otherwise.
	vals    []ParamValue
	formats []int16 // one per column
	res     Result
	pending arrow.RecordBatch
	off     int
	done    bool
}

func (p *portal) close() {
	if p.pending != nil {
		p.pending.Release()
		p.pending = nil
	}
	if p.params != nil {
		p.params.Release()
		p.params = nil
	}
	if p.res != nil {
		p.res.Close()
		p.res = nil
	}
}

func quoteName(kind, name string) string {
	if name == "" {
		return "unnamed " + kind
	}
	return kind + " " + strconv.Quote(name)
}

// simpleQuery runs a Query message: each statement in turn, stopping at
// the first error. The caller sends ReadyForQuery.
func (c *conn) simpleQuery(sql string) {
	ctx, done := c.callCtx()
	defer done()
	batch, err := c.sess.Query(ctx, sql)
	if err != nil {
		c.sendError(c.sqlErr(ctx, err))
		return
	}
	defer batch.Close()
	n := 0
	for {
		st, err := batch.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			c.sendError(c.sqlErr(ctx, err))
			return
		}
		n++
		err = c.runSimple(ctx, st)
		st.Close()
		if err != nil {
			c.sendError(c.sqlErr(ctx, err))
			return
		}
		if c.w.err != nil || c.ctx.Err() != nil {
			return
		}
	}
	if n == 0 {
		c.w.send(&pgproto3.EmptyQueryResponse{})
	}
}

func (c *conn) runSimple(ctx context.Context, st Statement) error {
	ps := newPrepared("", st)
	if len(ps.params) > 0 {
		return sqlerr.New(codeUndefinedParameter, "there is no parameter $1")
	}
	p := &portal{ps: ps, formats: make([]int16, len(ps.cols))}
	defer p.close()
	if b, ok := st.(BinaryResults); ok && b.BinaryResults() {
		for i := range p.formats {
			p.formats[i] = 1
		}
	}
	if ps.cols != nil {
		c.sendRowDescription(ps.cols, p.formats)
	}
	res, err := st.Execute(ctx, nil)
	if err != nil {
		return err
	}
	p.res = res
	_, err = c.drive(ctx, p, 0)
	return err
}

func (c *conn) sendRowDescription(cols []Column, formats []int16) {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		var f int16
		if formats != nil {
			f = formats[i]
		}
		fields[i] = pgproto3.FieldDescription{
			Name: []byte(col.Name), TableOID: col.TableOID, TableAttributeNumber: uint16(col.Attr),
			DataTypeOID: col.Type.OID(), DataTypeSize: col.Type.Typlen(), TypeModifier: col.Type.Typmod(),
			Format: f,
		}
	}
	c.w.send(&pgproto3.RowDescription{Fields: fields})
}

// drive sends a portal's output: up to maxRows rows (0 = all) and then
// PortalSuspended, or the rest and CommandComplete; COPY results run their
// sub-protocol. Rows go out batch by batch, flushed whenever the buffer
// fills, so the engine is never asked for more than the client has taken.
func (c *conn) drive(ctx context.Context, p *portal, maxRows int64) (suspended bool, err error) {
	switch r := p.res.(type) {
	case CopyInResult:
		return false, c.copyIn(ctx, r, p)
	case CopyOutResult:
		return false, c.copyOut(ctx, r, p)
	}
	cols := p.ps.cols
	opts := c.sess.ValueOptions()
	if om, ok := p.res.(OutputMemory); ok {
		c.w.out = om
		defer func() {
			c.w.release()
			c.w.out, c.w.exact = nil, false
		}()
	}
	var sent int64
	for {
		if maxRows > 0 && sent == maxRows {
			c.w.send(&pgproto3.PortalSuspended{})
			return true, nil
		}
		if p.pending == nil {
			if p.done {
				break
			}
			rec, err := p.res.Next(ctx)
			if errors.Is(err, io.EOF) {
				p.done = true
				break
			}
			if err != nil {
				return false, err
			}
			if err := checkBatch(rec, cols); err != nil {
				rec.Release()
				return false, err
			}
			p.pending, p.off = rec, 0
		}
		n := int(p.pending.NumRows())
		for p.off < n && (maxRows == 0 || sent < maxRows) {
			if err := c.writeRow(p.pending, p.off, cols, p.formats, opts); err != nil {
				return false, err
			}
			p.off++
			sent++
			if err := c.w.maybeFlush(); err != nil {
				return false, err
			}
			if sent&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return false, err
				}
			}
		}
		if p.off >= n {
			p.pending.Release()
			p.pending = nil
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
	}
	c.commandComplete(p.res.Tag(sent))
	c.reportChanges()
	return false, nil
}

// commandComplete sends CommandComplete with tag, encoded straight into
// the output buffer (pgproto3's message would copy the tag into a byte
// slice of its own first).
func (c *conn) commandComplete(tag string) {
	if c.w.err != nil {
		return
	}
	at := c.w.beginMsg('C')
	c.w.buf = append(append(c.w.buf, tag...), 0)
	c.w.endMsg(at)
}

// checkBatch verifies that a batch holds what Describe announced, so that
// the encoders never meet an Arrow type other than the column's.
func checkBatch(rec arrow.RecordBatch, cols []Column) error {
	if int(rec.NumCols()) != len(cols) {
		return sqlerr.New(sqlerr.InternalError, "result batch has %d columns, the statement described %d", rec.NumCols(), len(cols))
	}
	for j, col := range cols {
		if got, want := rec.Column(j).DataType(), col.Type.Arrow(); !arrow.TypeEqual(got, want) {
			return sqlerr.New(sqlerr.InternalError, "result column %q is %s, the statement described %s (%s)", col.Name, got, col.Type, want)
		}
	}
	return nil
}

// writeRow appends one DataRow straight into the output buffer, encoding
// each value in its column's format without an intermediate copy.
func (c *conn) writeRow(rec arrow.RecordBatch, i int, cols []Column, formats []int16, opts *sqltypes.Options) error {
	w := &c.w
	if w.out != nil {
		if err := w.reserve(rowBytes(rec, i, formats)); err != nil {
			return err
		}
	}
	start := len(w.buf)
	at := w.beginMsg('D')
	w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(len(cols)))
	for j := range cols {
		a := rec.Column(j)
		if a.IsNull(i) {
			w.buf = binary.BigEndian.AppendUint32(w.buf, 0xFFFFFFFF)
			continue
		}
		lenAt := len(w.buf)
		w.buf = append(w.buf, 0, 0, 0, 0)
		if formats[j] == 1 {
			b, err := sqltypes.EncodeBinary(w.buf, a, i, cols[j].Type)
			if err != nil {
				w.buf = w.buf[:start]
				return err
			}
			w.buf = b
		} else {
			w.buf = sqltypes.EncodeText(w.buf, a, i, cols[j].Type, opts)
		}
		binary.BigEndian.PutUint32(w.buf[lenAt:], uint32(len(w.buf)-lenAt-4))
	}
	w.endMsg(at)
	if err := w.reserve(0); err != nil { // the estimate fell short
		w.buf = w.buf[:start]
		return err
	}
	return nil
}

// rowBytes estimates the bytes of row i's DataRow: exact for text and
// binary strings (bytea's text form is hex, two characters a byte), a
// generous constant for the fixed-width rest.
func rowBytes(rec arrow.RecordBatch, i int, formats []int16) int64 {
	n := int64(7)
	for j, a := range rec.Columns() {
		n += 4
		if a.IsNull(i) {
			continue
		}
		l, ok := a.(interface{ ValueLen(int) int })
		if !ok {
			n += 40
			continue
		}
		v := int64(l.ValueLen(i))
		if _, bin := a.(*array.Binary); bin && formats[j] == 0 {
			v = 2*v + 2
		}
		n += v
	}
	return n
}

func (c *conn) parse(m *pgproto3.Parse) error {
	ns, named := c.sess.(NamedStatements)
	named = named && m.Name != ""
	if m.Name != "" && !named {
		if _, ok := c.stmts[m.Name]; ok {
			return sqlerr.New(sqlerr.DuplicatePreparedStatement, "prepared statement %q already exists", m.Name)
		}
	}
	types := make([]sqltypes.Type, len(m.ParameterOIDs))
	for i, oid := range m.ParameterOIDs {
		if oid == 0 {
			types[i] = sqltypes.UnknownType
			continue
		}
		t, ok := sqltypes.FromOID(oid)
		if !ok {
			return sqlerr.New(sqlerr.FeatureNotSupported, "parameter $%d has type OID %d, which is not supported", i+1, oid)
		}
		types[i] = t
	}
	ctx, done := c.callCtx()
	defer done()
	if named {
		if _, err := ns.PrepareNamed(ctx, m.Name, m.Query, types); err != nil {
			return c.sqlErr(ctx, err)
		}
		c.w.send(&pgproto3.ParseComplete{})
		return nil
	}
	st, err := c.sess.Prepare(ctx, m.Query, types)
	if err != nil {
		return c.sqlErr(ctx, err)
	}
	if m.Name == "" {
		c.dropStmt("")
	}
	c.stmts[m.Name] = newPrepared(m.Name, st)
	c.w.send(&pgproto3.ParseComplete{})
	return nil
}

// dropStmt closes a statement and the portals made from it, as Postgres
// does when a statement is closed or the unnamed one replaced.
func (c *conn) dropStmt(name string) {
	if ns, ok := c.sess.(NamedStatements); ok && name != "" {
		for pn, p := range c.portals {
			if p.ps.name == name {
				p.close()
				delete(c.portals, pn)
			}
		}
		ns.CloseStatement(name)
		return
	}
	ps, ok := c.stmts[name]
	if !ok {
		return
	}
	for pn, p := range c.portals {
		if p.ps == ps {
			p.close()
			delete(c.portals, pn)
		}
	}
	ps.close()
	delete(c.stmts, name)
}

// stmt finds a prepared statement: the unnamed one here, a named one in
// the session when it keeps them (NamedStatements).
func (c *conn) stmt(name string) (*prepared, error) {
	if ns, ok := c.sess.(NamedStatements); ok && name != "" {
		st, err := ns.Statement(name)
		if err != nil {
			return nil, err
		}
		// The session may hand out the same Statement again (a client
		// running one prepared INSERT per row): what was derived from
		// it, such as the parameters' schema, is kept.
		if p := c.lastNamed; p != nil && p.name == name && st != nil && p.stmt == st {
			return p, nil
		}
		p := newPrepared(name, st)
		c.lastNamed = p
		return p, nil
	}
	ps, ok := c.stmts[name]
	if !ok {
		return nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "%s does not exist", quoteName("prepared statement", name))
	}
	return ps, nil
}

func (c *conn) bind(m *pgproto3.Bind) error {
	ps, err := c.stmt(m.PreparedStatement)
	if err != nil {
		return err
	}
	if m.DestinationPortal != "" {
		if _, ok := c.portals[m.DestinationPortal]; ok {
			return sqlerr.New(codeDuplicateCursor, "portal %q already exists", m.DestinationPortal)
		}
	}
	np := len(ps.params)
	if nf := len(m.ParameterFormatCodes); nf > 1 && nf != len(m.Parameters) {
		return sqlerr.New(sqlerr.ProtocolViolation, "bind message has %d parameter formats but %d parameters", nf, len(m.Parameters))
	}
	if len(m.Parameters) != np {
		return sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement %q requires %d", len(m.Parameters), ps.name, np)
	}
	formats, err := resolveFormats(m.ResultFormatCodes, len(ps.cols))
	if err != nil {
		return err
	}
	var params arrow.RecordBatch
	var vals []ParamValue
	spare := ps.spare // no portal's: its values may be overwritten
	ps.spare = nil
	if _, ok := ps.stmt.(ValuesStatement); ok && np > 0 {
		var buf []ParamValue
		if spare != nil && cap(spare.vals) >= np {
			buf = spare.vals[:0]
		} else {
			buf = make([]ParamValue, 0, np)
		}
		if v, ok := decodeValues(buf, ps, m.ParameterFormatCodes, m.Parameters); ok {
			vals = v
		}
	}
	if vals == nil {
		if params, err = c.decodeParams(ps, m.ParameterFormatCodes, m.Parameters); err != nil {
			return err
		}
	}
	var old *portal
	if m.DestinationPortal == "" {
		if old = c.portals[""]; old != nil {
			old.close()
		}
	}
	p := spare
	if p == nil {
		p = &portal{}
	}
	*p = portal{name: m.DestinationPortal, ps: ps, params: params, vals: vals, formats: formats}
	c.portals[m.DestinationPortal] = p
	if old != nil && old.ps == ps {
		// Replaced, it is no longer anyone's: the next Bind reuses it.
		ps.spare = old
	}
	c.w.send(&pgproto3.BindComplete{})
	return nil
}

// resolveFormats expands Bind's result format codes: none means all text,
// one applies to every column, otherwise one per column.
func resolveFormats(codes []int16, n int) ([]int16, error) {
	out := make([]int16, n)
	switch len(codes) {
	case 0:
	case 1:
		for i := range out {
			out[i] = codes[0]
		}
	case n:
		copy(out, codes)
	default:
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message has %d result formats but query has %d columns", len(codes), n)
	}
	for _, f := range out {
		if f != 0 && f != 1 {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unsupported format code: %d", f)
		}
	}
	return out, nil
}

// decodeParams decodes Bind parameters into a one-row batch, as the
// types' input (text) or receive (binary) functions would. Parameters of
// unknown type are TEXT, as Postgres resolves an unknown parameter.
func (c *conn) decodeParams(ps *prepared, fcodes []int16, vals [][]byte) (arrow.RecordBatch, error) {
	types := ps.params
	if len(types) == 0 {
		return nil, nil
	}
	mem := c.srv.cfg.Allocator
	opts := c.sess.ValueOptions()
	if ps.paramSchema == nil {
		fields := make([]arrow.Field, len(types))
		for i, t := range types {
			fields[i] = paramType(t).Field("$"+strconv.Itoa(i+1), true)
		}
		ps.paramSchema = arrow.NewSchema(fields, nil)
	}
	if c.pbSchema != ps.paramSchema {
		c.dropParamBuilders()
		c.pb = make([]array.Builder, len(types))
		for i, t := range types {
			c.pb[i] = array.NewBuilder(mem, paramType(t).Arrow())
		}
		c.pbSchema = ps.paramSchema
	}
	cols := make([]arrow.Array, 0, len(types))
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	for i, t := range types {
		t = paramType(t)
		f := paramFormat(fcodes, i)
		b := c.pb[i]
		var err error
		switch {
		case vals[i] == nil:
			b.AppendNull()
		case f == 0:
			err = sqltypes.DecodeText(b, t, string(vals[i]), opts)
		case f == 1:
			err = sqltypes.DecodeBinary(b, t, vals[i])
			if e, ok := sqlerr.As(err); ok && e.Code == codeInvalidBinaryFormat {
				err = sqlerr.New(codeInvalidBinaryFormat, "incorrect binary data format in bind parameter %d", i+1)
			}
		default:
			err = sqlerr.New(sqlerr.InvalidParameterValue, "unsupported format code: %d", f)
		}
		if err != nil {
			// A builder may hold part of the value: start afresh.
			c.dropParamBuilders()
			return nil, err
		}
		cols = append(cols, b.NewArray())
	}
	return array.NewRecordBatch(ps.paramSchema, cols, 1), nil
}

// dropParamBuilders releases the Bind parameters' builders.
func (c *conn) dropParamBuilders() {
	for _, b := range c.pb {
		b.Release()
	}
	c.pb, c.pbSchema = nil, nil
}

// paramType is the type a Bind parameter is decoded as: TEXT for one of
// unknown type, as Postgres resolves an unknown parameter.
func paramType(t sqltypes.Type) sqltypes.Type {
	if t.Kind == sqltypes.Unknown {
		return sqltypes.TextType
	}
	return t
}

func (c *conn) describe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		ps, err := c.stmt(m.Name)
		if err != nil {
			return err
		}
		oids := make([]uint32, len(ps.params))
		for i, t := range ps.params {
			if t.Kind != sqltypes.Unknown {
				oids[i] = t.OID()
			}
		}
		c.w.send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
		if ps.cols == nil {
			c.w.send(&pgproto3.NoData{})
		} else {
			c.sendRowDescription(ps.cols, nil)
		}
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok && m.Name != "" {
			if cs, isCS := c.sess.(Cursors); isCS {
				if cols, binary, found := cs.CursorColumns(m.Name); found {
					c.describeCursor(cols, binary)
					return nil
				}
			}
		}
		if !ok {
			return sqlerr.New(sqlerr.InvalidCursorName, "portal %q does not exist", m.Name)
		}
		if p.ps.cols == nil {
			c.w.send(&pgproto3.NoData{})
		} else {
			c.sendRowDescription(p.ps.cols, p.formats)
		}
	default:
		return sqlerr.New(sqlerr.ProtocolViolation, "invalid DESCRIBE message subtype %d", m.ObjectType)
	}
	return nil
}

// describeCursor answers Describe of a portal that is a SQL cursor: its
// rows, in binary for a BINARY cursor.
func (c *conn) describeCursor(cols []Column, binary bool) {
	if len(cols) == 0 {
		c.w.send(&pgproto3.NoData{})
		return
	}
	formats := make([]int16, len(cols))
	if binary {
		for i := range formats {
			formats[i] = 1
		}
	}
	c.sendRowDescription(cols, formats)
}

func (c *conn) execute(m *pgproto3.Execute) error {
	p, ok := c.portals[m.Portal]
	if !ok {
		return sqlerr.New(sqlerr.InvalidCursorName, "portal %q does not exist", m.Portal)
	}
	if p.ps.stmt == nil {
		c.w.send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	ctx, done := c.callCtx()
	defer done()
	if p.res == nil {
		var res Result
		var err error
		if p.vals != nil {
			res, err = p.ps.stmt.(ValuesStatement).ExecuteValues(ctx, p.vals)
		} else {
			res, err = p.ps.stmt.Execute(ctx, p.params)
		}
		if err != nil {
			c.dropPortal(p)
			return c.sqlErr(ctx, err)
		}
		p.res = res
	} else if p.done {
		// An exhausted portal completes again with no rows (SELECT 0).
		c.commandComplete(p.res.Tag(0))
		return nil
	}
	if _, err := c.drive(ctx, p, int64(m.MaxRows)); err != nil {
		c.dropPortal(p)
		return c.sqlErr(ctx, err)
	}
	return nil
}

// dropPortal removes a portal whose execution failed: Postgres marks it
// failed, and it cannot run again.
func (c *conn) dropPortal(p *portal) {
	if c.portals[p.name] == p {
		delete(c.portals, p.name)
	}
	p.close()
}

func (c *conn) closeMsg(m *pgproto3.Close) error {
	switch m.ObjectType {
	case 'S':
		c.dropStmt(m.Name)
	case 'P':
		if p, ok := c.portals[m.Name]; ok {
			c.dropPortal(p)
		}
	default:
		return sqlerr.New(sqlerr.ProtocolViolation, "invalid CLOSE message subtype %d", m.ObjectType)
	}
	c.w.send(&pgproto3.CloseComplete{})
	return nil
}
