package sqltypes

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/stretchr/testify/require"
)

func TestParseTypeName(t *testing.T) {
	cases := []struct {
		in     string
		want   string
		oid    uint32
		typmod int32
	}{
		{"int8", "bigint", 20, -1},
		{"BIGINT", "bigint", 20, -1},
		{"int", "integer", 23, -1},
		{"smallint", "smallint", 21, -1},
		{"double  precision", "double precision", 701, -1},
		{"float", "double precision", 701, -1},
		{"float(10)", "real", 700, -1},
		{"real", "real", 700, -1},
		{"numeric(10,2)", "numeric(10,2)", 1700, 655366},
		{"decimal(5)", "numeric(5,0)", 1700, 327684},
		{"numeric", "numeric", 1700, -1},
		{"varchar(10)", "character varying(10)", 1043, 14},
		{"character varying", "character varying", 1043, -1},
		{"text", "text", 25, -1},
		{"bytea", "bytea", 17, -1},
		{"bool", "boolean", 16, -1},
		{"date", "date", 1082, -1},
		{"timestamp", "timestamp without time zone", 1114, -1},
		{"timestamptz", "timestamp with time zone", 1184, -1},
		{"timestamp with time zone", "timestamp with time zone", 1184, -1},
		{"timestamp(3) with time zone", "timestamp(3) with time zone", 1184, 3},
		{"pg_catalog.int4", "integer", 23, -1},
		{"interval", "interval", 1186, -1},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			typ, err := ParseTypeName(c.in)
			require.NoError(t, err)
			require.Equal(t, c.want, typ.String())
			require.Equal(t, c.oid, typ.OID())
			require.Equal(t, c.typmod, typ.Typmod())
			// The canonical spelling parses back to the same type.
			again, err := ParseTypeName(typ.String())
			require.NoError(t, err)
			require.Equal(t, typ, again)
		})
	}
}

func TestParseTypeNameErrors(t *testing.T) {
	for in, code := range map[string]string{
		"hstore":         sqlerr.UndefinedObject,
		"numeric(50,2)":  sqlerr.InvalidParameterValue,
		"numeric(5,6)":   sqlerr.InvalidParameterValue,
		"varchar(0)":     sqlerr.InvalidParameterValue,
		"int(3)":         sqlerr.SyntaxError,
		"timestamp(9)":   sqlerr.InvalidParameterValue,
		"numeric(1,2,3)": sqlerr.SyntaxError,
		"varchar(x)":     sqlerr.SyntaxError,
	} {
		_, err := ParseTypeName(in)
		require.Error(t, err, in)
		require.Equal(t, code, sqlerr.Code(err), in)
	}
}

func TestFieldRoundTrip(t *testing.T) {
	for _, typ := range []Type{BoolType, Int2Type, Int4Type, Int8Type, Float4Type, Float8Type,
		NumericType(12, 3), NumericType(NoLimit, NoLimit), TextType, VarcharOf(7), VarcharType,
		ByteaType, DateType, TimestampType, TimestampTZType, IntervalType} {
		f := typ.Field("c", true)
		got, err := FromField(f)
		require.NoError(t, err)
		require.Equal(t, typ, got)
		// Without metadata the Arrow type alone still gives a compatible type.
		inferred, err := FromArrow(f.Type)
		require.NoError(t, err)
		require.True(t, arrow.TypeEqual(inferred.Arrow(), f.Type), typ.String())
	}
	_, err := FromArrow(arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)))
	require.Equal(t, sqlerr.FeatureNotSupported, sqlerr.Code(err))
}

func TestFromOID(t *testing.T) {
	for _, typ := range []Type{BoolType, Int8Type, TextType, TimestampTZType, IntervalType} {
		got, ok := FromOID(typ.OID())
		require.True(t, ok)
		require.Equal(t, typ.Kind, got.Kind)
	}
	_, ok := FromOID(0)
	require.False(t, ok)
}
