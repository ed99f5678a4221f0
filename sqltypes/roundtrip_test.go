package sqltypes

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

var roundTripTypes = []Type{
	BoolType, Int2Type, Int4Type, Int8Type, Float4Type, Float8Type,
	NumericType(10, 3), NumericType(38, 0), NumericType(38, 38), NumericType(NoLimit, NoLimit), NumericType(5, 5),
	TextType, VarcharOf(4), VarcharType, ByteaType, DateType, TimestampType, TimestampTZType,
	{Kind: Timestamp, Precision: 3, Scale: NoLimit, Length: NoLimit}, IntervalType,
}

// randomArray builds n random values of t (about 1 in 10 NULL), biased
// towards edge values.
func randomArray(mem memory.Allocator, r *rand.Rand, t Type, n int) arrow.Array {
	b := array.NewBuilder(mem, t.Arrow())
	defer b.Release()
	for i := 0; i < n; i++ {
		if r.IntN(10) == 0 {
			b.AppendNull()
			continue
		}
		edge := r.IntN(8) == 0
		switch t.Kind {
		case Bool:
			b.(*array.BooleanBuilder).Append(r.IntN(2) == 0)
		case Int2:
			b.(*array.Int16Builder).Append(int16(r.Uint32()))
		case Int4:
			b.(*array.Int32Builder).Append(int32(r.Uint32()))
		case Int8:
			v := int64(r.Uint64())
			if edge {
				v = []int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)]
			}
			b.(*array.Int64Builder).Append(v)
		case Float4:
			f := math.Float32frombits(r.Uint32())
			if edge {
				f = []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), math.MaxFloat32, math.SmallestNonzeroFloat32}[r.IntN(5)]
			}
			b.(*array.Float32Builder).Append(f)
		case Float8:
			f := math.Float64frombits(r.Uint64())
			if r.IntN(2) == 0 {
				f = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
			}
			if edge {
				f = []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64}[r.IntN(6)]
			}
			b.(*array.Float64Builder).Append(f)
		case Numeric:
			dt := t.Arrow().(*arrow.Decimal128Type)
			digits := 1 + r.IntN(int(dt.Precision))
			buf := make([]byte, digits)
			for j := range buf {
				buf[j] = byte('0' + r.IntN(10))
				if edge {
					buf[j] = '9'
				}
			}
			for len(buf) > 1 && buf[0] == '0' {
				buf = buf[1:]
			}
			n := digitsToNum(buf)
			if r.IntN(2) == 0 {
				n = n.Negate()
			}
			b.(*array.Decimal128Builder).Append(n)
		case Text, Varchar:
			max := 12
			if t.Length != NoLimit {
				max = t.Length
			}
			rs := make([]rune, r.IntN(max+1))
			for j := range rs {
				switch r.IntN(4) {
				case 0:
					rs[j] = rune(0x20 + r.IntN(0x5f))
				case 1:
					rs[j] = rune(0x80 + r.IntN(0x780))
				case 2:
					rs[j] = []rune{'\\', '\'', '"', '\t', '\n', ' ', 'é', '€', '😀'}[r.IntN(9)]
				default:
					c := rune(1 + r.IntN(0x10fffe))
					if !utf8.ValidRune(c) {
						c = 'x'
					}
					rs[j] = c
				}
			}
			if t.Length != NoLimit && len(rs) > 0 && rs[len(rs)-1] == ' ' {
				rs[len(rs)-1] = '.' // trailing blanks within n are kept anyway
			}
			b.(*array.StringBuilder).Append(string(rs))
		case Bytea:
			v := make([]byte, r.IntN(20))
			for j := range v {
				v[j] = byte(r.Uint32())
			}
			b.(*array.BinaryBuilder).Append(v)
		case Date:
			d := int32(r.Int64N(dateEndJD) - unixEpochJD)
			if edge {
				d = []int32{DateInfinity, DateNegInfinity, -unixEpochJD, dateEndJD - 1 - unixEpochJD, 0}[r.IntN(5)]
			}
			b.(*array.Date32Builder).Append(arrow.Date32(d))
		case Timestamp, TimestampTZ:
			var us int64
			switch r.IntN(3) {
			case 0:
				lo := int64(minTimestampUs)
				us = lo + int64(r.Uint64N(uint64(math.MaxInt64)+uint64(-lo)))
			default: // 1800..2200, where zone rules are interesting
				us = r.Int64N(400*365*usPerDay) - 170*365*usPerDay
			}
			if edge {
				us = []int64{TimestampInfinity, TimestampNegInfinity, minTimestampUs, math.MaxInt64 - 1, 0, -1}[r.IntN(6)]
			}
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(roundTimestamp(us, t)))
		case Interval:
			iv := arrow.MonthDayNanoInterval{
				Months:      int32(r.Uint32()),
				Days:        int32(r.Uint32()),
				Nanoseconds: (int64(r.Uint64()) / 1000) * 1000,
			}
			if r.IntN(2) == 0 {
				iv.Months, iv.Days = int32(r.IntN(40)-20), int32(r.IntN(80)-40)
				iv.Nanoseconds = (r.Int64N(200*usPerDay) - 100*usPerDay) * 1000
			}
			b.(*array.MonthDayNanoIntervalBuilder).Append(iv)
		}
	}
	return b.NewArray()
}

// sameValue compares element i of two arrays of type t; NaN equals NaN.
func sameValue(t *testing.T, typ Type, a, b arrow.Array, i int, msg string) {
	require.Equal(t, a.IsNull(i), b.IsNull(i), msg)
	if a.IsNull(i) {
		return
	}
	switch typ.Kind {
	case Float4:
		x, y := a.(*array.Float32).Value(i), b.(*array.Float32).Value(i)
		if x != x {
			require.True(t, y != y, msg)
			return
		}
		require.Equal(t, math.Float32bits(x), math.Float32bits(y), msg)
	case Float8:
		x, y := a.(*array.Float64).Value(i), b.(*array.Float64).Value(i)
		if x != x {
			require.True(t, y != y, msg)
			return
		}
		require.Equal(t, math.Float64bits(x), math.Float64bits(y), msg)
	default:
		require.True(t, array.SliceEqual(a, int64(i), int64(i+1), b, int64(i), int64(i+1)), msg)
	}
}

var roundTripZones = []string{"UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/Dublin", "America/St_Johns"}

// TestRoundTripText: DecodeText(EncodeText(x)) == x for random values, in
// several session zones and extra_float_digits 1..3.
func TestRoundTripText(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, typ := range roundTripTypes {
		o := optsIn(t, roundTripZones[r.IntN(len(roundTripZones))])
		o.ExtraFloatDigits = 1 + r.IntN(3)
		in := randomArray(mem, r, typ, 400)
		b := array.NewBuilder(mem, typ.Arrow())
		for i := 0; i < in.Len(); i++ {
			if in.IsNull(i) {
				b.AppendNull()
				continue
			}
			s := string(EncodeText(nil, in, i, typ, o))
			require.NoError(t, DecodeText(b, typ, s, o), "%s %q", typ, s)
		}
		out := b.NewArray()
		for i := 0; i < in.Len(); i++ {
			sameValue(t, typ, in, out, i, typ.String()+" "+string(EncodeText(nil, in, i, typ, o)))
		}
		out.Release()
		b.Release()
		in.Release()
	}
}

// TestRoundTripBinary: DecodeBinary(EncodeBinary(x)) == x.
func TestRoundTripBinary(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, typ := range roundTripTypes {
		in := randomArray(mem, r, typ, 400)
		b := array.NewBuilder(mem, typ.Arrow())
		for i := 0; i < in.Len(); i++ {
			if in.IsNull(i) {
				b.AppendNull()
				continue
			}
			raw, err := EncodeBinary(nil, in, i, typ)
			require.NoError(t, err)
			require.NoError(t, DecodeBinary(b, typ, raw), "%s %x", typ, raw)
		}
		out := b.NewArray()
		for i := 0; i < in.Len(); i++ {
			sameValue(t, typ, in, out, i, typ.String())
		}
		out.Release()
		b.Release()
		in.Release()
	}
}

// TestRoundTripGo: AppendGo(GoValue(x)) == x.
func TestRoundTripGo(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, typ := range roundTripTypes {
		in := randomArray(mem, r, typ, 400)
		b := array.NewBuilder(mem, typ.Arrow())
		for i := 0; i < in.Len(); i++ {
			v := GoValue(in, i, typ)
			require.NoError(t, AppendGo(b, typ, v, nil), "%s %v", typ, v)
		}
		out := b.NewArray()
		for i := 0; i < in.Len(); i++ {
			sameValue(t, typ, in, out, i, typ.String())
		}
		out.Release()
		b.Release()
		in.Release()
	}
}
