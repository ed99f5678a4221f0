package sqltypes_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

func ExampleDecodeText() {
	t, _ := sqltypes.ParseTypeName("numeric(10,2)")
	b := array.NewBuilder(memory.NewGoAllocator(), t.Arrow())
	defer b.Release()
	if err := sqltypes.DecodeText(b, t, " 12.345 ", nil); err != nil {
		panic(err)
	}
	err := sqltypes.DecodeText(b, t, "abc", nil)
	fmt.Println(sqlerr.Code(err), err)

	a := b.NewArray()
	defer a.Release()
	fmt.Println(string(sqltypes.EncodeText(nil, a, 0, t, nil)))
	bin, _ := sqltypes.EncodeBinary(nil, a, 0, t)
	fmt.Printf("%x\n", bin)
	// Output:
	// 22P02 invalid input syntax for type numeric: "abc"
	// 12.35
	// 0002000000000002000c0dac
}
