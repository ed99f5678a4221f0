package catalog

import (
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// SQLSTATEs the shared sqlerr package has no constant for.
const (
	codeDuplicateColumn        = "42701"
	codeInvalidTableDefinition = "42P16"
	codeSerializationFailure   = "40001"
	codeProgramLimit           = "54000"
	codeWrongObjectType        = "42809"
	codeObjectInUse            = "55006"
)

// Column is one column of a table.
type Column struct {
	Name    string
	Type    sqltypes.Type
	NotNull bool
	// Default is the value rows stored before the column existed read as
	// (ALTER TABLE ADD COLUMN ... DEFAULT v), in PostgreSQL's text input
	// form; nil is NULL. The catalog never evaluates it for new rows: the
	// planner fills omitted columns.
	Default *string
}

// TableDef is what CREATE TABLE declares. Names are taken verbatim: the
// planner folds unquoted identifiers to lower case before calling in.
type TableDef struct {
	Name    string
	Columns []Column
	// OrderBy lists the ordering columns, most significant first. Scans of an
	// ordered table yield rows ascending by these columns, NULLs last, and
	// rows with equal keys in insertion order. Empty means unordered.
	OrderBy []string
}

// TableInfo describes a table as of one snapshot.
type TableInfo struct {
	// ID is unique per CREATE TABLE (a re-created table gets a new one),
	// starts at 1 and survives restarts; 0 for a table created in an open
	// transaction block and not committed yet.
	ID      uint64
	Name    string
	Columns []Column
	OrderBy []string
	// OrderKeys are the column indices of OrderBy, most significant first
	// (all ascending, NULLs last).
	OrderKeys []int
	// Schema is the Arrow schema of a full scan; each field carries its SQL
	// type in metadata (sqltypes.Type.Field).
	Schema   *arrow.Schema
	Rows     int64
	Segments int
	// Temp is set for a table of a temporary catalog (Catalog.NewTemp).
	Temp bool
	// Bytes is the table's stored size: the summed size on disk of its
	// committed segment files in a data directory, the summed length of
	// its stored batches' Arrow buffers in memory (pg_table_size).
	Bytes int64
}

// ColumnIndex returns the index of the named column, or a 42703 error.
func (ti *TableInfo) ColumnIndex(name string) (int, error) {
	for i, c := range ti.Columns {
		if c.Name == name {
			return i, nil
		}
	}
	return -1, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, ti.Name)
}

// tableMeta is the validated, immutable description of a table shared by
// every state that contains it.
type tableMeta struct {
	id      uint64 // unique per CREATE; a re-created table gets a new id
	def     TableDef
	keys    []int
	schema  *arrow.Schema
	keyCmps []colCmp
	// colIDs are the columns' stable ids (segments name their columns by
	// id, so renames and drops need no rewrite); nextCol is the next free.
	colIDs  []uint32
	nextCol uint32
	// defaults are one-row arrays of the columns' Default (nil: NULL).
	defaults []arrow.Array
	temp     bool // a session's temporary table: never logged
}

// fill returns n copies of column i's default.
func (m *tableMeta) fill(mem memory.Allocator, i, n int) arrow.Array {
	d := m.defaults[i]
	if d == nil {
		return array.MakeArrayOfNull(mem, m.schema.Field(i).Type, n)
	}
	b := array.NewBuilder(mem, d.DataType())
	defer b.Release()
	b.Reserve(n)
	for range n {
		appendRange(b, d, 0, 1)
	}
	return b.NewArray()
}

// newTableMeta validates def and derives the schema and key comparators;
// columns get ids 1..n.
func newTableMeta(id uint64, def TableDef) (*tableMeta, error) {
	ids := make([]uint32, len(def.Columns))
	for i := range ids {
		ids[i] = uint32(i + 1)
	}
	return newTableMetaIDs(id, def, ids, uint32(len(ids)+1))
}

func newTableMetaIDs(id uint64, def TableDef, colIDs []uint32, nextCol uint32) (*tableMeta, error) {
	if def.Name == "" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "table name must not be empty")
	}
	if len(def.Columns) == 0 {
		return nil, sqlerr.New(codeInvalidTableDefinition, "table %q must have at least one column", def.Name)
	}
	cols := make([]Column, len(def.Columns))
	copy(cols, def.Columns)
	fields := make([]arrow.Field, len(cols))
	seen := make(map[string]bool, len(cols))
	for i, c := range cols {
		if c.Name == "" {
			return nil, sqlerr.New(sqlerr.SyntaxError, "column %d of table %q has an empty name", i+1, def.Name)
		}
		if seen[c.Name] {
			return nil, sqlerr.New(codeDuplicateColumn, "column %q specified more than once", c.Name)
		}
		seen[c.Name] = true
		if c.Type.Kind == sqltypes.Unknown || c.Type.Kind > sqltypes.JSONB {
			return nil, sqlerr.New(codeInvalidTableDefinition, "column %q of table %q has pseudo-type %s", c.Name, def.Name, c.Type)
		}
		fields[i] = c.Type.Field(c.Name, !c.NotNull)
	}
	m := &tableMeta{id: id, def: TableDef{Name: def.Name, Columns: cols, OrderBy: append([]string(nil), def.OrderBy...)},
		colIDs: colIDs, nextCol: nextCol, defaults: make([]arrow.Array, len(cols))}
	m.schema = arrow.NewSchema(fields, nil)
	for i, c := range cols {
		if c.Default == nil {
			continue
		}
		b := array.NewBuilder(memory.DefaultAllocator, fields[i].Type)
		err := sqltypes.DecodeText(b, c.Type, *c.Default, sqltypes.DefaultOptions())
		if err == nil {
			m.defaults[i] = b.NewArray()
		}
		b.Release()
		if err != nil {
			return nil, err
		}
	}
	used := map[string]bool{}
	for _, name := range def.OrderBy {
		idx := -1
		for i, c := range cols {
			if c.Name == name {
				idx = i
			}
		}
		if idx < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q named in ORDER BY of table %q does not exist", name, def.Name)
		}
		if used[name] {
			return nil, sqlerr.New(codeDuplicateColumn, "column %q appears twice in ORDER BY of table %q", name, def.Name)
		}
		used[name] = true
		c := comparatorFor(fields[idx].Type)
		if c == nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "column %q of type %s cannot be an ordering column of table %q", name, cols[idx].Type, def.Name)
		}
		m.keys = append(m.keys, idx)
		m.keyCmps = append(m.keyCmps, c)
	}
	return m, nil
}

func (m *tableMeta) ordered() bool { return len(m.keys) > 0 }

// cmpRows compares row i of a with row j of b on the ordering key.
func (m *tableMeta) cmpRows(a arrow.RecordBatch, i int, b arrow.RecordBatch, j int) int {
	for k, col := range m.keys {
		if c := m.keyCmps[k](a.Column(col), b.Column(col), i, j); c != 0 {
			return c
		}
	}
	return 0
}

func (m *tableMeta) info(segs []segRef) *TableInfo {
	ti := &TableInfo{
		ID:        m.id,
		Name:      m.def.Name,
		Columns:   append([]Column(nil), m.def.Columns...),
		OrderBy:   append([]string(nil), m.def.OrderBy...),
		OrderKeys: append([]int(nil), m.keys...),
		Schema:    m.schema,
		Segments:  len(segs),
		Temp:      m.temp,
	}
	for _, s := range segs {
		ti.Rows += s.live()
		ti.Bytes += s.st.bytes
	}
	return ti
}

// keyValue converts a Go value given as a range bound into the canonical
// value of a key column of type t. Accepted: bool for BOOLEAN; any Go
// integer for the integer types; float32/float64 (or an integer) for the
// float types; decimal128.Num at the column's scale, decimal text or an
// integer for NUMERIC; string for TEXT/VARCHAR; []byte for BYTEA; time.Time
// or an integer in the stored unit for DATE (days since 1970-01-01) and
// TIMESTAMP(TZ) (microseconds since 1970-01-01 UTC).
func keyValue(t sqltypes.Type, v any) (any, error) {
	bad := func() (any, error) {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "range bound %v (%T) does not match column type %s", v, v, t)
	}
	switch t.Kind {
	case sqltypes.Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8:
		if i, ok := toInt64(v); ok {
			return i, nil
		}
	case sqltypes.Float4, sqltypes.Float8:
		switch f := v.(type) {
		case float64:
			if t.Kind == sqltypes.Float4 {
				return float64(float32(f)), nil
			}
			return f, nil
		case float32:
			return float64(f), nil
		}
		if i, ok := toInt64(v); ok {
			return float64(i), nil
		}
	case sqltypes.Numeric:
		dt := t.Arrow().(*arrow.Decimal128Type)
		switch d := v.(type) {
		case decimal128.Num:
			return d, nil
		case string:
			n, err := decimal128.FromString(d, dt.Precision, dt.Scale)
			if err != nil {
				return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", d)
			}
			return n, nil
		case *big.Int:
			return decimal128.FromBigInt(d), nil
		}
		if i, ok := toInt64(v); ok {
			n := decimal128.FromI64(i)
			return n.IncreaseScaleBy(dt.Scale), nil
		}
	case sqltypes.Text, sqltypes.Varchar, sqltypes.JSON, sqltypes.JSONB:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case sqltypes.Bytea:
		if b, ok := v.([]byte); ok {
			return b, nil
		}
	case sqltypes.Date:
		if tm, ok := v.(time.Time); ok {
			y, mo, d := tm.Date()
			return int64(time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Unix() / 86400), nil
		}
		if i, ok := toInt64(v); ok {
			return i, nil
		}
	case sqltypes.Timestamp, sqltypes.TimestampTZ:
		if tm, ok := v.(time.Time); ok {
			if t.Kind == sqltypes.Timestamp {
				// TIMESTAMP has no zone: take the wall clock as written.
				y, mo, d := tm.Date()
				tm = time.Date(y, mo, d, tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond(), time.UTC)
			}
			return tm.UnixMicro(), nil
		}
		if i, ok := toInt64(v); ok {
			return i, nil
		}
	}
	return bad()
}

func toInt64(v any) (int64, bool) {
	switch i := v.(type) {
	case int:
		return int64(i), true
	case int8:
		return int64(i), true
	case int16:
		return int64(i), true
	case int32:
		return int64(i), true
	case int64:
		return i, true
	}
	return 0, false
}
