package sqltypes_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestArrayText checks array text input and output against PG15's.
func TestArrayText(t *testing.T) {
	cases := []struct{ typ, in, out string }{
		{"bigint[]", "{1,2,NULL}", "{1,2,NULL}"},
		{"int[]", " { 1 , 2 } ", "{1,2}"},
		{"int[]", "{}", "{}"},
		{"int[]", "[1:2]={3,4}", "{3,4}"},
		{"text[]", `{"a b","c\"d",NULL,"NULL","",x\,y}`, `{"a b","c\"d",NULL,"NULL","","x,y"}`},
		{"text[]", `{ a b , c }`, `{"a b",c}`},
		{"boolean[]", "{t,false}", "{t,f}"},
		{"double precision[]", "{1.5,NaN}", "{1.5,NaN}"},
		{"numeric(5,2)[]", "{1.5}", "{1.50}"},
		{"timestamp[]", `{"2024-01-02 03:04:05"}`, `{"2024-01-02 03:04:05"}`},
		{"date[]", `{2024-01-02}`, `{2024-01-02}`},
	}
	for _, c := range cases {
		t.Run(c.typ+c.in, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			typ, err := sqltypes.ParseTypeName(c.typ)
			require.NoError(t, err)
			require.True(t, typ.IsArray())
			b := array.NewBuilder(mem, typ.Arrow())
			defer b.Release()
			require.NoError(t, sqltypes.DecodeText(b, typ, c.in, nil))
			a := b.NewArray()
			defer a.Release()
			require.Equal(t, c.out, string(sqltypes.EncodeText(nil, a, 0, typ, nil)))
			bin, err := sqltypes.EncodeBinary(nil, a, 0, typ)
			require.NoError(t, err)
			b2 := array.NewBuilder(mem, typ.Arrow())
			defer b2.Release()
			require.NoError(t, sqltypes.DecodeBinary(b2, typ, bin))
			a2 := b2.NewArray()
			defer a2.Release()
			require.Equal(t, c.out, string(sqltypes.EncodeText(nil, a2, 0, typ, nil)))
		})
	}
}

func TestArrayTextErrors(t *testing.T) {
	cases := []struct{ typ, in, code string }{
		{"int[]", "1,2", sqlerr.InvalidTextRepresentation},
		{"int[]", "{1,a}", sqlerr.InvalidTextRepresentation},
		{"int[]", "{{1},{2}}", sqlerr.FeatureNotSupported},
		{"int[]", "{1,}", sqlerr.InvalidTextRepresentation},
		{"int[]", "{1} x", sqlerr.InvalidTextRepresentation},
		{"int[]", "[0:1]={1,2}", sqlerr.FeatureNotSupported},
	}
	for _, c := range cases {
		typ, err := sqltypes.ParseTypeName(c.typ)
		require.NoError(t, err)
		b := array.NewBuilder(memory.NewGoAllocator(), typ.Arrow())
		err = sqltypes.DecodeText(b, typ, c.in, nil)
		require.Equal(t, c.code, sqlerr.Code(err), "%s: %v", c.in, err)
		require.Equal(t, 0, b.Len())
		b.Release()
	}
}

func TestArrayTypes(t *testing.T) {
	typ, err := sqltypes.ParseTypeName("int8[]")
	require.NoError(t, err)
	require.Equal(t, uint32(1016), typ.OID())
	require.Equal(t, "bigint[]", typ.String())
	back, ok := sqltypes.FromOID(1016)
	require.True(t, ok)
	require.Equal(t, typ, back)
	f, err := sqltypes.FromField(typ.Field("x", true))
	require.NoError(t, err)
	require.Equal(t, typ, f)
	got, err := sqltypes.FromArrow(typ.Arrow())
	require.NoError(t, err)
	require.Equal(t, typ, got)

	b := array.NewBuilder(memory.NewGoAllocator(), typ.Arrow())
	defer b.Release()
	require.NoError(t, sqltypes.AppendGo(b, typ, []int64{1, 2}, nil))
	require.NoError(t, sqltypes.AppendGo(b, typ, []any{int64(3), nil}, nil))
	a := b.NewArray()
	defer a.Release()
	require.Equal(t, []any{int64(1), int64(2)}, sqltypes.GoValue(a, 0, typ))
	require.Equal(t, []any{int64(3), nil}, sqltypes.GoValue(a, 1, typ))
}
