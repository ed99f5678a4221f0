package asof

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/asofsql/asofsql/exec/operator"
)

// ref points at one retained right row: row Row of slot Src. The slots are
// the sources of the payload gathers (operator.Gather), so a ref is the
// gather's own index; noMatch (Src < 0) is no row, gathered as NULL.
type ref = operator.Ref

var noMatch = operator.NullRef

// fixedWidth and fixedBytes: see operator.FixedWidth and FixedBytes.
func fixedWidth(dt arrow.DataType) int       { return operator.FixedWidth(dt) }
func fixedBytes(a arrow.Array, w int) []byte { return operator.FixedBytes(a, w) }

// srcValidity is a right batch's validity bitmap and offset, nil bits when
// the array has no NULLs (the common case, checked without a call).
type srcValidity struct {
	bits   []byte
	offset int
}

func validityOf(a arrow.Array) srcValidity {
	if a.NullN() == 0 {
		return srcValidity{}
	}
	return srcValidity{bits: a.NullBitmapBytes(), offset: a.Data().Offset()}
}

func (v srcValidity) null(row int32) bool {
	return v.bits != nil && !bitutil.BitIsSet(v.bits, v.offset+int(row))
}
