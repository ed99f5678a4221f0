package flightsql

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqltypes"
)

// Schemas a client sees. Result columns keep the engine's Arrow types and
// their SQL type under sqltypes.MetadataKey; the Flight SQL column
// metadata (ARROW:FLIGHT:SQL:TYPE_NAME, PRECISION, SCALE) is added so that
// JDBC and ODBC report the SQL type names.

// announce is the schema a result is announced and streamed with: the
// cursor's fields plus Flight SQL column metadata.
func announce(s *arrow.Schema) *arrow.Schema {
	fields := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		t, err := sqltypes.FromField(f)
		if err != nil {
			fields[i] = f
			continue
		}
		f.Metadata = withColumnMetadata(f.Metadata, t)
		fields[i] = f
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// withColumnMetadata adds Flight SQL's column metadata for t to md.
func withColumnMetadata(md arrow.Metadata, t sqltypes.Type) arrow.Metadata {
	keys, vals := append([]string(nil), md.Keys()...), append([]string(nil), md.Values()...)
	add := func(k, v string) {
		if md.FindKey(k) < 0 {
			keys, vals = append(keys, k), append(vals, v)
		}
	}
	add(afsql.TypeNameKey, t.String())
	if p, s, ok := precisionScale(t); ok {
		add(afsql.PrecisionKey, strconv.Itoa(p))
		add(afsql.ScaleKey, strconv.Itoa(s))
	}
	return arrow.NewMetadata(keys, vals)
}

// precisionScale is what JDBC's getPrecision/getScale report: digits of
// NUMERIC(p,s), characters of VARCHAR(n), fractional-second digits of
// timestamps.
func precisionScale(t sqltypes.Type) (int, int, bool) {
	switch t.Kind {
	case sqltypes.Numeric:
		if t.Precision == sqltypes.NoLimit {
			return sqltypes.MaxNumericPrecision, sqltypes.DefaultNumericScale, true
		}
		return t.Precision, max(t.Scale, 0), true
	case sqltypes.Varchar:
		if t.Length != sqltypes.NoLimit {
			return t.Length, 0, true
		}
	case sqltypes.Timestamp, sqltypes.TimestampTZ:
		if t.Precision != sqltypes.NoLimit {
			return t.Precision, 0, true
		}
		return 6, 0, true
	}
	return 0, 0, false
}

// columnsSchema is the result schema known before execution: every
// column nullable (nullability is only known once the plan runs).
func columnsSchema(cols []asofsql.Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		f := c.Type.Field(c.Name, true)
		f.Metadata = withColumnMetadata(f.Metadata, c.Type)
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil)
}

// paramSchema describes parameters $1..$n. Integer parameters are
// declared int64 and real ones float64, the widest Arrow type of their
// family, so that clients bind native 64-bit values (the arrow-go
// database/sql driver can bind nothing narrower); the engine checks each
// value's range against the parameter's SQL type (22003). Other types are
// their own Arrow type; an untyped parameter is text. The exact SQL type
// is in the Flight SQL TYPE_NAME metadata.
func paramSchema(types []sqltypes.Type) *arrow.Schema {
	fields := make([]arrow.Field, len(types))
	for i, t := range types {
		dt := t.Arrow()
		switch {
		case t.IsInteger():
			dt = arrow.PrimitiveTypes.Int64
		case t.Kind == sqltypes.Float4:
			dt = arrow.PrimitiveTypes.Float64
		}
		name := t
		if t.Kind == sqltypes.Unknown {
			name = sqltypes.TextType
		}
		fields[i] = arrow.Field{Name: "$" + strconv.Itoa(i+1), Type: dt, Nullable: true,
			Metadata: withColumnMetadata(arrow.Metadata{}, name)}
	}
	return arrow.NewSchema(fields, nil)
}
