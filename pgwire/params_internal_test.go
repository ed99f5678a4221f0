package pgwire

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/sqltypes"
)

// slowParam decodes one parameter as decodeParams does (a builder,
// sqltypes.DecodeText or DecodeBinary) and reads row 0 back as fastParam
// returns it.
func slowParam(t *testing.T, mem memory.Allocator, typ sqltypes.Type, format int16, data []byte) (any, error) {
	t.Helper()
	b := array.NewBuilder(mem, typ.Arrow())
	defer b.Release()
	var err error
	switch {
	case data == nil:
		b.AppendNull()
	case format == 0:
		err = sqltypes.DecodeText(b, typ, string(data), sqltypes.DefaultOptions())
	default:
		err = sqltypes.DecodeBinary(b, typ, data)
	}
	if err != nil {
		return nil, err
	}
	a := b.NewArray()
	defer a.Release()
	require.Equal(t, 1, a.Len())
	if a.IsNull(0) {
		return nil, nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(0), nil
	case *array.Int32:
		return int64(a.Value(0)), nil
	case *array.Int16:
		return int64(a.Value(0)), nil
	case *array.Float64:
		return a.Value(0), nil
	case *array.Boolean:
		return a.Value(0), nil
	case *array.String:
		return a.Value(0), nil
	case *array.Timestamp:
		return int64(a.Value(0)), nil
	}
	t.Fatalf("unexpected array %T", a)
	return nil, nil
}

// checkFast asserts that fastParam, when it takes a value, takes exactly
// what the builders' path decodes (and that that path accepts it).
func checkFast(t *testing.T, mem memory.Allocator, typ sqltypes.Type, format int16, data []byte) bool {
	t.Helper()
	pv, ok := fastParam(typ, format, data)
	if !ok {
		return false
	}
	require.Equal(t, typ, pv.T)
	v := pv.Value()
	want, err := slowParam(t, mem, typ, format, data)
	require.NoError(t, err, "%s format %d %q: the fast path took a value the builders refuse", typ, format, data)
	if f, isF := v.(float64); isF {
		// NaN payloads too: the bits are the value.
		require.IsType(t, want, v)
		require.Equal(t, math.Float64bits(want.(float64)), math.Float64bits(f), "%s format %d %q", typ, format, data)
		return true
	}
	require.Equal(t, want, v, "%s format %d %q", typ, format, data)
	return true
}

func be8(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func be8i(v int64) []byte { return be8(uint64(v)) }

// TestFastParamMatchesBuilders: every parameter the fast path decodes is
// decoded to what the Arrow builders' path reads back, over edge cases and
// random values of each type and format; the common values take it.
func TestFastParamMatchesBuilders(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	types := []sqltypes.Type{sqltypes.Int8Type, sqltypes.Int4Type, sqltypes.Int2Type, sqltypes.Float8Type,
		sqltypes.BoolType, sqltypes.TextType, sqltypes.TimestampType, sqltypes.TimestampTZType}
	texts := []string{"", "0", "-0", "1", "-1", "+1", " 1", "1 ", "01", "1_000", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "999999999999999999", "-999999999999999999",
		"2147483647", "2147483648", "-2147483648", "32767", "32768", "-32768", "99999", "9999", "1e3",
		"1.5", "NaN", "Infinity", "t", "true", "abc", "AAPL", "é", "日本", "\x00", "a\x00b", "\xff", "\xc3",
		"\xed\xa0\x80", "\uFFFD", "0x10", "--1", "-"}
	bins := [][]byte{{}, {0}, {1}, {2}, {0xff}, {0, 1}, {0x80, 0}, {0, 0, 0, 1}, {0x80, 0, 0, 0},
		be8(0), be8(1), be8(math.MaxUint64), be8(1 << 63), be8(math.MaxInt64), be8(math.MaxInt64 - 1),
		be8(math.Float64bits(1.5)), be8(math.Float64bits(math.NaN())), be8(math.Float64bits(math.Inf(-1))),
		be8(uint64(fastTimestampMax)), be8(uint64(fastTimestampMax - 1)), be8i(-fastTimestampMax + 1),
		be8i(-fastTimestampMax), be8(uint64(851_234_567_890_123)), make([]byte, 9), []byte("AAPL"),
		[]byte("a\x00b"), []byte("\xff\xfe")}
	took := map[string]int{}
	for _, typ := range types {
		require.True(t, checkFast(t, mem, typ, 0, nil) && checkFast(t, mem, typ, 1, nil), "NULL %s", typ)
		for _, s := range texts {
			if checkFast(t, mem, typ, 0, []byte(s)) {
				took[typ.String()+" text"]++
			}
		}
		for _, b := range bins {
			if checkFast(t, mem, typ, 1, b) {
				took[typ.String()+" binary"]++
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		typ := types[r.IntN(len(types))]
		u := r.Uint64() >> r.IntN(64)
		if r.IntN(2) == 0 {
			u = -u
		}
		checkFast(t, mem, typ, 1, be8(u))
		checkFast(t, mem, typ, 1, be8(u)[8-1<<r.IntN(4):])
		checkFast(t, mem, typ, 0, []byte(strconv.FormatInt(int64(u), 10)))
		s := make([]byte, r.IntN(8))
		for i := range s {
			s[i] = byte(r.IntN(256))
		}
		checkFast(t, mem, typ, 0, s)
		checkFast(t, mem, typ, 1, s)
	}
	// What a driver sends for a row of (BIGINT, TEXT, DOUBLE PRECISION,
	// TIMESTAMP) goes the fast way.
	for _, c := range []struct {
		typ    sqltypes.Type
		format int16
		data   []byte
	}{
		{sqltypes.Int8Type, 1, be8(42)}, {sqltypes.Int8Type, 0, []byte("-42")},
		{sqltypes.TextType, 0, []byte("AAPL")}, {sqltypes.TextType, 1, []byte("日本")},
		{sqltypes.Float8Type, 1, be8(math.Float64bits(101.25))},
		{sqltypes.TimestampType, 1, be8(uint64(851_234_567_890_123))},
		{sqltypes.BoolType, 1, []byte{1}}, {sqltypes.Int4Type, 1, []byte{0xff, 0xff, 0xff, 0xfe}},
	} {
		require.True(t, checkFast(t, mem, c.typ, c.format, c.data), "%s format %d %q", c.typ, c.format, c.data)
	}
	t.Log(took)
}

// TestDecodeValuesFallsBack: one parameter off the fast path sends the
// whole Bind through the builders; other types never take it.
func TestDecodeValuesFallsBack(t *testing.T) {
	ps := &prepared{params: []sqltypes.Type{sqltypes.Int8Type, sqltypes.UnknownType, sqltypes.Float8Type}}
	vals, ok := decodeValues(nil, ps, []int16{1, 0, 1}, [][]byte{be8(7), []byte("x"), nil})
	require.True(t, ok)
	require.Equal(t, []ParamValue{{T: sqltypes.Int8Type, Int: 7}, {T: sqltypes.TextType, Str: "x"}, {T: sqltypes.Float8Type, Null: true}}, vals)
	_, ok = decodeValues(vals, ps, []int16{1, 0, 1}, [][]byte{be8(7), []byte("x"), {1, 2}})
	require.False(t, ok, "a malformed DOUBLE PRECISION is the builders' to refuse")
	_, ok = decodeValues(nil, ps, []int16{0}, [][]byte{[]byte("+7"), []byte("x"), nil})
	require.False(t, ok)
	for _, typ := range []sqltypes.Type{sqltypes.DateType, sqltypes.VarcharType, sqltypes.ByteaType, sqltypes.IntervalType,
		{Kind: sqltypes.Timestamp, Precision: 3, Scale: sqltypes.NoLimit, Length: sqltypes.NoLimit}} {
		_, ok := fastParam(typ, 1, be8(0))
		require.False(t, ok, "%s", typ)
		_, ok = fastParam(typ, 0, []byte("1"))
		require.False(t, ok, "%s", typ)
	}
}
