package vec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/exec/operator"
	"github.com/asofsql/asofsql/sqltypes"
)

// Pick builds an array of type t whose row i is srcs[which[i]][i] (NULL
// when which[i] < 0). All srcs have the batch length.
func Pick(mem memory.Allocator, t sqltypes.Type, srcs []arrow.Array, which []int, rows int) arrow.Array {
	refs := make([]operator.Ref, rows)
	for i, w := range which[:rows] {
		refs[i] = operator.NullRef
		if w >= 0 {
			refs[i] = operator.Ref{Src: int32(w), Row: int32(i)}
		}
	}
	return gather(mem, t, srcs, refs)
}

// Gather builds an array of type t whose row i is srcs[which[i]][idx[i]]
// (NULL when which[i] < 0), with operator.Gather.
func Gather(mem memory.Allocator, t sqltypes.Type, srcs []arrow.Array, which, idx []int) arrow.Array {
	refs := make([]operator.Ref, len(which))
	for i, w := range which {
		refs[i] = operator.NullRef
		if w >= 0 {
			refs[i] = operator.Ref{Src: int32(w), Row: int32(idx[i])}
		}
	}
	return gather(mem, t, srcs, refs)
}

func gather(mem memory.Allocator, t sqltypes.Type, srcs []arrow.Array, refs []operator.Ref) arrow.Array {
	out, err := operator.Gather(context.Background(), mem, t.Arrow(), srcs, refs)
	if err != nil {
		// Every SQL type's Arrow type has a typed loop in operator.Gather:
		// no take kernel, so no error.
		panic(fmt.Sprintf("vec: gather of %s: %v", t, err))
	}
	return out
}
