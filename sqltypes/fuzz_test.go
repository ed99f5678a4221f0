package sqltypes

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

var fuzzTypes = []Type{
	BoolType, Int2Type, Int4Type, Int8Type, Float4Type, Float8Type,
	NumericType(10, 3), NumericType(NoLimit, NoLimit), NumericType(3, 3), TextType, VarcharOf(3),
	ByteaType, DateType, TimestampType, TimestampTZType,
	{Kind: Timestamp, Precision: 2, Scale: NoLimit, Length: NoLimit}, IntervalType,
}

// FuzzDecodeText: any input for any type either fails with a *sqlerr.Error
// and appends nothing, or appends one value whose text output decodes
// again to a value with the same text output. It never panics.
func FuzzDecodeText(f *testing.F) {
	for _, cs := range [][]pgCase{pgBoolTextIn, pgIntTextIn, pgFloatTextIn, pgNumericTextIn, pgStringTextIn,
		pgByteaTextIn, pgDateTextIn, pgTimestampTextIn, pgTimestampTZTextIn, pgIntervalTextIn} {
		for _, c := range cs {
			f.Add(uint8(0), c.in)
		}
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which uint8, s string) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		o := &Options{Location: ny, ExtraFloatDigits: 1}
		for k, typ := range fuzzTypes {
			if which != 0 && int(which)%len(fuzzTypes) != k {
				continue
			}
			b := array.NewBuilder(mem, typ.Arrow())
			err := DecodeText(b, typ, s, o)
			if err != nil {
				if _, ok := sqlerr.As(err); !ok {
					t.Fatalf("%s %q: error is not a sqlerr.Error: %v", typ, s, err)
				}
				if b.Len() != 0 {
					t.Fatalf("%s %q: appended on error", typ, s)
				}
				b.Release()
				continue
			}
			a := b.NewArray()
			out := string(EncodeText(nil, a, 0, typ, o))
			bin, berr := EncodeBinary(nil, a, 0, typ)
			a.Release()
			if berr != nil {
				t.Fatalf("%s %q: EncodeBinary: %v", typ, s, berr)
			}
			if err := DecodeText(b, typ, out, o); err != nil {
				t.Fatalf("%s %q printed as %q which does not read back: %v", typ, s, out, err)
			}
			if err := DecodeBinary(b, typ, bin); err != nil {
				t.Fatalf("%s %q: binary %x does not read back: %v", typ, s, bin, err)
			}
			a = b.NewArray()
			for i := 0; i < 2; i++ {
				if again := string(EncodeText(nil, a, i, typ, o)); again != out {
					t.Fatalf("%s %q printed as %q, then as %q", typ, s, out, again)
				}
			}
			a.Release()
			b.Release()
		}
	})
}
