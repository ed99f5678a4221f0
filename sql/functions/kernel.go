package functions

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sql/expr"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/asofsql/asofsql/vec"
)

// Building blocks of kernels. Most functions are computed row by row from
// Go values (strict1..strict3, rowKernel); the hot ones (math on doubles,
// date_trunc) run typed loops over the arrays with package vec.

// argsAll evaluates the first n arguments; on error nothing is leaked.
func argsAll(in Input, n int) ([]arrow.Array, error) {
	out := make([]arrow.Array, n)
	for i := range out {
		a, err := in.Arg(i)
		if err != nil {
			vec.Release(out[:i])
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// strict1 is the kernel of a function computed row by row from one
// argument: a NULL argument gives NULL, the other rows f. A's and R's Go
// types must be what reader and appender read and write for the
// argument's and the result's SQL types.
func strict1[A, R any](t sqltypes.Type, f func(a A) (R, error)) Kernel {
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, 1)
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		ra := reader[A](arrs[0])
		return strictRows(in, t, arrs, func(i int) (R, error) { return f(ra(i)) })
	}
}

// strict2 is strict1 for two arguments.
func strict2[A, B, R any](t sqltypes.Type, f func(a A, b B) (R, error)) Kernel {
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, 2)
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		ra, rb := reader[A](arrs[0]), reader[B](arrs[1])
		return strictRows(in, t, arrs, func(i int) (R, error) { return f(ra(i), rb(i)) })
	}
}

// strict3 is strict1 for three arguments.
func strict3[A, B, C, R any](t sqltypes.Type, f func(a A, b B, c C) (R, error)) Kernel {
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, 3)
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		ra, rb, rc := reader[A](arrs[0]), reader[B](arrs[1]), reader[C](arrs[2])
		return strictRows(in, t, arrs, func(i int) (R, error) { return f(ra(i), rb(i), rc(i)) })
	}
}

// strictRows builds the result of type t: NULL where any of arrs is NULL,
// f(i) elsewhere.
func strictRows[R any](in Input, t sqltypes.Type, arrs []arrow.Array, f func(i int) (R, error)) (arrow.Array, error) {
	n := in.Rows()
	valid := vec.Validity(n, arrs...)
	bld := array.NewBuilder(in.Mem(), t.Arrow())
	defer bld.Release()
	bld.Reserve(n)
	app := appender[R](bld)
	lenOf := valueLen[R]()
	data, _ := bld.(dataBuilder)
	for i := 0; i < n; i++ {
		if !vec.Valid(valid, i) {
			bld.AppendNull()
			continue
		}
		v, err := f(i)
		if err != nil {
			return nil, err
		}
		if lenOf != nil {
			if err := growData(in, data, lenOf(v)); err != nil {
				return nil, err
			}
		}
		app(v)
	}
	return bld.NewArray(), nil
}

// reader returns a function reading row i of a as a T: string (text),
// int32 (int4, date), int64 (any integer, widened; timestamps), float64
// (either float), bool, []byte (bytea, aliasing the array),
// decimal128.Num or arrow.MonthDayNanoInterval. A T that does not fit a
// is a programming error caught by the function's tests.
func reader[T any](a arrow.Array) func(i int) T {
	var f any
	switch any(*new(T)).(type) {
	case string:
		f = a.(*array.String).Value
	case int32:
		vs := vec.Values[int32](a)
		f = func(i int) int32 { return vs[i] }
	case int64:
		switch a := a.(type) {
		case *array.Int16:
			f = func(i int) int64 { return int64(a.Value(i)) }
		case *array.Int32:
			f = func(i int) int64 { return int64(a.Value(i)) }
		default:
			vs := vec.Values[int64](a)
			f = func(i int) int64 { return vs[i] }
		}
	case float64:
		if fa, ok := a.(*array.Float32); ok {
			f = func(i int) float64 { return float64(fa.Value(i)) }
		} else {
			vs := vec.Values[float64](a)
			f = func(i int) float64 { return vs[i] }
		}
	case bool:
		f = a.(*array.Boolean).Value
	case []byte:
		f = a.(*array.Binary).Value
	case decimal128.Num:
		f = a.(*array.Decimal128).Value
	case arrow.MonthDayNanoInterval:
		vs := vec.Values[arrow.MonthDayNanoInterval](a)
		f = func(i int) arrow.MonthDayNanoInterval { return vs[i] }
	}
	return f.(func(int) T)
}

// appender returns a function appending an R to bld, the builder of the
// result type: string (text), int32 (int4, date), int64 (int8,
// timestamps), float64, bool, []byte (bytea), decimal128.Num (numeric, at
// the type's scale) or arrow.MonthDayNanoInterval.
func appender[R any](bld array.Builder) func(R) {
	var f any
	switch b := bld.(type) {
	case *array.StringBuilder:
		f = b.Append
	case *array.Int32Builder:
		f = b.Append
	case *array.Date32Builder:
		f = func(v int32) { b.Append(arrow.Date32(v)) }
	case *array.Int64Builder:
		f = b.Append
	case *array.TimestampBuilder:
		f = func(v int64) { b.Append(arrow.Timestamp(v)) }
	case *array.Float64Builder:
		f = b.Append
	case *array.BooleanBuilder:
		f = b.Append
	case *array.BinaryBuilder:
		f = b.Append
	case *array.Decimal128Builder:
		f = b.Append
	case *array.MonthDayNanoIntervalBuilder:
		f = b.Append
	}
	return f.(func(R))
}

// rowKernel is the kernel of a function computed row by row on Go values
// as vec.Value reads them (int64 for every integer type, string, bool,
// nil for NULL), for catalog-sized inputs: f's result is appended by its
// Go type (nil is NULL). A strict kernel gives NULL without calling f when
// an argument is NULL.
func rowKernel(t sqltypes.Type, n int, strict bool, f func(v []any) (any, error)) Kernel {
	return func(in Input) (arrow.Array, error) {
		arrs, err := argsAll(in, n)
		if err != nil {
			return nil, err
		}
		defer vec.Release(arrs)
		rows := in.Rows()
		bld := array.NewBuilder(in.Mem(), t.Arrow())
		defer bld.Release()
		vals := make([]any, len(arrs))
		for i := 0; i < rows; i++ {
			null := false
			for k, a := range arrs {
				vals[k] = vec.Value(a, i)
				null = null || vals[k] == nil
			}
			if null && strict {
				bld.AppendNull()
				continue
			}
			out, err := f(vals)
			if err != nil {
				return nil, err
			}
			switch v := out.(type) {
			case nil:
				bld.AppendNull()
			case bool:
				bld.(*array.BooleanBuilder).Append(v)
			case string:
				if err := growData(in, bld.(dataBuilder), len(v)); err != nil {
					return nil, err
				}
				bld.(*array.StringBuilder).Append(v)
			case int64:
				switch ib := bld.(type) {
				case *array.Int16Builder:
					ib.Append(int16(v))
				case *array.Int32Builder:
					ib.Append(int32(v))
				case *array.Int64Builder:
					ib.Append(v)
				case *array.TimestampBuilder:
					ib.Append(arrow.Timestamp(v))
				case *array.Date32Builder:
					ib.Append(arrow.Date32(v))
				default:
					return nil, sqlerr.New(sqlerr.InternalError, "functions: int result for %s", t)
				}
			default:
				return nil, sqlerr.New(sqlerr.InternalError, "functions: result %T", out)
			}
		}
		return bld.NewArray(), nil
	}
}

// Kind classes a Prepare checks arguments against.
const (
	anyKind    sqltypes.Kind = 255 // any type
	stringKind sqltypes.Kind = 254 // text, varchar or an untyped literal
	intKind    sqltypes.Kind = 253 // int2, int4 or int8
)

// kindsAre reports whether the arguments' kinds match want element by
// element (and the counts agree); want may hold the classes above.
func kindsAre(args []expr.Expr, want ...sqltypes.Kind) bool {
	if len(args) != len(want) {
		return false
	}
	for i, a := range args {
		if !kindIs(a.Type(), want[i]) {
			return false
		}
	}
	return true
}

func kindIs(t sqltypes.Type, want sqltypes.Kind) bool {
	switch want {
	case anyKind:
		return true
	case stringKind:
		return vec.IsStringKind(t.Kind)
	case intKind:
		return t.IsInteger()
	}
	return t.Kind == want
}

// prepareIf is a Prepare that builds k when the arguments' kinds are
// want and the result's kind is res (a class as for arguments), and
// refuses the call otherwise.
func prepareIf(k func(args []expr.Expr, t sqltypes.Type) Kernel, res sqltypes.Kind, want ...sqltypes.Kind) func([]expr.Expr, sqltypes.Type) (Kernel, error) {
	return func(args []expr.Expr, t sqltypes.Type) (Kernel, error) {
		if !kindsAre(args, want...) || !kindIs(t, res) {
			return nil, errTypes
		}
		return k(args, t), nil
	}
}

// needer is what the query's memory account (exec/memacct's Account, the
// allocator Input.Mem returns when the query has one) answers: 53200 when
// n more bytes would take the query past its limit.
type needer interface {
	Need(what string, n int64) error
}

// dataBuilder is a string or bytea builder, whose value buffer Arrow
// doubles as values are appended.
type dataBuilder interface {
	DataLen() int
	DataCap() int
}

// growData asks the query's memory account before b's value buffer
// grows to take n more bytes: Arrow reallocates it to the next power of
// two, and the old buffer lives until the copy is made, so a batch of
// long strings (a || a, repeat, concat of large columns) fails with 53200
// before the allocation that would take the query past its limit rather
// than after the batch. A nil b (not a string builder), or one with room,
// asks nothing.
func growData(in Input, b dataBuilder, n int) error {
	if b == nil || b.DataLen()+n <= b.DataCap() {
		return nil
	}
	return need(in, "a string result", int64(bitutil.NextPowerOf2(b.DataLen()+n)))
}

// valueLen returns the byte length of a string or []byte R, nil for
// other types (typed once, so that the row loop boxes nothing).
func valueLen[R any]() func(R) int {
	var f any
	switch any(*new(R)).(type) {
	case string:
		f = func(s string) int { return len(s) }
	case []byte:
		f = func(b []byte) int { return len(b) }
	default:
		return nil
	}
	return f.(func(R) int)
}

// need asks the query's memory account for n bytes before a kernel builds
// a value whose size follows an argument's value rather than the input's
// size; without an account it allows anything.
func need(in Input, what string, n int64) error {
	if a, ok := in.Mem().(needer); ok {
		return a.Need(what, n)
	}
	return nil
}
