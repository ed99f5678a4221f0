package sqltypes

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The wire server encodes every result value with EncodeText; these
// measure the hot types. Each op encodes one value into a reused buffer.

const benchN = 4096

func benchEncode(b *testing.B, typ Type, o *Options, fill func(r *rand.Rand, bld array.Builder)) {
	r := rand.New(rand.NewPCG(1, 2))
	bld := array.NewBuilder(memory.NewGoAllocator(), typ.Arrow())
	for i := 0; i < benchN; i++ {
		fill(r, bld)
	}
	a := bld.NewArray()
	bld.Release()
	defer a.Release()
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf = EncodeText(buf[:0], a, i%benchN, typ, o)
	}
}

func BenchmarkEncodeTextInt64(b *testing.B) {
	benchEncode(b, Int8Type, nil, func(r *rand.Rand, bld array.Builder) {
		bld.(*array.Int64Builder).Append(r.Int64N(1e12) - 5e11)
	})
}

func BenchmarkEncodeTextFloat64(b *testing.B) {
	benchEncode(b, Float8Type, nil, func(r *rand.Rand, bld array.Builder) {
		bld.(*array.Float64Builder).Append(r.NormFloat64() * 1e4)
	})
}

func BenchmarkEncodeTextTimestamp(b *testing.B) {
	benchEncode(b, TimestampType, nil, func(r *rand.Rand, bld array.Builder) {
		bld.(*array.TimestampBuilder).Append(arrow.Timestamp(1.7e15 + r.Int64N(1e14)))
	})
}

func BenchmarkEncodeTextTimestampTZUTC(b *testing.B) {
	benchEncode(b, TimestampTZType, nil, func(r *rand.Rand, bld array.Builder) {
		bld.(*array.TimestampBuilder).Append(arrow.Timestamp(1.7e15 + r.Int64N(1e14)))
	})
}

func BenchmarkEncodeTextTimestampTZNewYork(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	benchEncode(b, TimestampTZType, &Options{Location: ny, ExtraFloatDigits: 1}, func(r *rand.Rand, bld array.Builder) {
		bld.(*array.TimestampBuilder).Append(arrow.Timestamp(1.7e15 + r.Int64N(1e14)))
	})
}

func BenchmarkDecodeTextTimestamp(b *testing.B) {
	bld := array.NewTimestampBuilder(memory.NewGoAllocator(), TimestampType.Arrow().(*arrow.TimestampType))
	defer bld.Release()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i%benchN == 0 {
			bld.Release()
			bld = array.NewTimestampBuilder(memory.NewGoAllocator(), TimestampType.Arrow().(*arrow.TimestampType))
		}
		if err := DecodeText(bld, TimestampType, "2024-01-02 03:04:05.123456", nil); err != nil {
			b.Fatal(err)
		}
	}
}
