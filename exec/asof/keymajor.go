package asof

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/asofsql/asofsql/sqlerr"
)

// Key-major inputs are ordered by (by-keys..., t) instead of by t: each key
// is one contiguous group, groups ascend by key (NULL keys last), and t
// ascends within a group (docs/sql.md, "Ordering": such inputs are
// accepted too, with the same result). The kernels then run one group at a
// time: the right cursor never reads past its group, and the left and
// right groups are aligned by comparing order keys: byte strings that sort
// like the key tuples (memcomparable encoding).

// orderKey appends the memcomparable encoding of row i's key tuple to dst:
// per column a tag (1 value, 2 NULL, so NULLs sort last) and the value,
// big-endian with the sign bit flipped for signed numbers, the IEEE total
// order for floats (-0 = 0), and for strings and binaries the bytes with
// 0x00 escaped as 0x00 0xFF and a 0x00 0x01 terminator. Strings compare
// bytewise, as the catalog and exec.Sort order them.
func orderKey(dst []byte, cols []arrow.Array, i int) []byte {
	for _, c := range cols {
		if c.IsNull(i) {
			dst = append(dst, 2)
			continue
		}
		dst = append(dst, 1)
		switch a := c.(type) {
		case *array.String, *array.LargeString, *array.Binary, *array.LargeBinary, *array.FixedSizeBinary:
			for _, b := range varValue(a, i) {
				if b == 0 {
					dst = append(dst, 0, 0xFF)
				} else {
					dst = append(dst, b)
				}
			}
			dst = append(dst, 0, 1)
		case *array.Uint8, *array.Uint16, *array.Uint32, *array.Uint64:
			dst = binary.BigEndian.AppendUint64(dst, fixedKey(c, i))
		case *array.Float32, *array.Float64:
			f := math.Float64frombits(fixedKey(c, i))
			if f != f {
				dst = binary.BigEndian.AppendUint64(dst, math.MaxUint64) // NaN sorts last
			} else {
				dst = binary.BigEndian.AppendUint64(dst, floatToKey(f))
			}
		case *array.Decimal128:
			v := a.Value(i)
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.HighBits())^signBit)
			dst = binary.BigEndian.AppendUint64(dst, v.LowBits())
		default: // signed integers, bool, dates, timestamps
			dst = binary.BigEndian.AppendUint64(dst, fixedKey(c, i)^signBit)
		}
	}
	return dst
}

// groupCursor tracks the key groups of one input for the key-major checks.
type groupCursor struct {
	key  []byte // order key of the current group
	have bool
}

// enter records a group's order key, which must not sort before the
// previous group's; otherwise the input is not ordered by its keys. (Equal
// keys are the same group seen again, e.g. a run of NULL keys that goes on
// in the next batch.)
func (g *groupCursor) enter(key []byte, input, what string, row int64) error {
	if g.have && bytes.Compare(key, g.key) < 0 {
		return sqlerr.New(sqlerr.DataException,
			"ASOF input %s is not ordered by (%s): row %d starts a key group that sorts before the previous one",
			input, what, row)
	}
	g.key = append(g.key[:0], key...)
	g.have = true
	return nil
}

// leftKeyColumns points the key-major bookkeeping at the left batch's
// keys and returns its key columns (leftRow builds order keys from them);
// nil when not key-major.
func (r *core[V]) leftKeyColumns(lb arrow.RecordBatch, lk *leftKeys) []arrow.Array {
	r.lkb = &lk.kb
	if !r.keyMajor {
		return nil
	}
	keyCols := make([]arrow.Array, len(r.sp.LeftKeys))
	for i, c := range r.sp.LeftKeys {
		keyCols[i] = lb.Column(c)
	}
	return keyCols
}

// leftRow handles the group bookkeeping for left row i in key-major mode:
// a new left key closes the open right group and positions the right
// cursor on the new key's group, if the right input has one. (The kernel
// then checks that the row's t does not descend within its group:
// leftLast and leftHas, reset here for a new group.)
func (r *core[V]) leftRow(ctx context.Context, keyCols []arrow.Array, i int) error {
	kb := r.lkb
	var same bool
	switch {
	case !r.havePrev:
	case kb.null[i]:
		// Keys with a NULL never match, but (a, NULL) and (b, NULL) are
		// still different groups: compare order keys.
		r.okBuf = orderKey(r.okBuf[:0], keyCols, i)
		same = bytes.Equal(r.okBuf, r.lgroups.key)
	case r.prevNull:
	case r.sp.keyEnc.u64:
		same = binary.LittleEndian.Uint64(r.prevLeft) == kb.u64[i]
	default:
		same = bytes.Equal(r.prevLeft, kb.key(i))
	}
	if same {
		return nil
	}
	r.havePrev, r.prevNull = true, kb.null[i]
	if r.sp.keyEnc.u64 {
		r.prevLeft = binary.LittleEndian.AppendUint64(r.prevLeft[:0], kb.u64[i])
	} else {
		r.prevLeft = append(r.prevLeft[:0], kb.key(i)...)
	}
	r.okBuf = orderKey(r.okBuf[:0], keyCols, i)
	if err := r.lgroups.enter(r.okBuf, r.leftName, r.leftKeys, r.leftSeen+int64(i)+1); err != nil {
		return err
	}
	var zero V
	r.leftLast, r.leftHas = zero, false
	return r.openGroup(ctx, r.okBuf, kb.null[i])
}

// leftGroupOrderError reports left row i's t below its predecessor's in
// its key group.
func (r *core[V]) leftGroupOrderError(i int) error {
	return sqlerr.New(sqlerr.DataException,
		"ASOF input %s is not ordered by (%s): row %d has a lower %s than the row before it in its key group",
		r.leftName, r.leftKeys, r.leftSeen+int64(i)+1, r.sp.leftTName)
}

// closeGroup drops the open group's state (its key never recurs) and skips
// its unread rows, checking their order.
func (r *core[V]) closeGroup(ctx context.Context) error {
	if r.group < 0 {
		return nil
	}
	g := r.group
	var zero V
	if lr := r.latest[g]; lr.Src >= 0 {
		r.unref(lr.Src)
		r.latest[g] = noMatch
		r.latestT[g] = zero
		r.live--
	}
	mask := int64(len(r.q) - 1)
	for ; r.qLen > 0; r.qLen-- {
		r.unref(r.q[r.qStart&mask].r.Src)
		r.q[r.qStart&mask].t = zero
		r.qStart++
	}
	r.head[g], r.tail[g] = -1, -1
	for {
		if _, ok, err := r.peek(ctx); err != nil || !ok {
			r.group = -1
			return err
		}
		r.take()
	}
}

// openGroup positions the right cursor on the group whose order key equals
// lkey, skipping groups that sort before it; it leaves the cursor alone
// (and no group open) when the next group sorts after it.
func (r *core[V]) openGroup(ctx context.Context, lkey []byte, null bool) error {
	if err := r.closeGroup(ctx); err != nil {
		return err
	}
	if null {
		return nil
	}
	for {
		if r.curPos >= r.curLen {
			if r.eof {
				return nil
			}
			if err := r.loadBatch(ctx); err != nil {
				return err
			}
			continue
		}
		i := r.curPos
		row := r.curBase + int64(i) + 1
		r.okBuf2 = orderKey(r.okBuf2[:0], r.curKeys, i)
		if r.entered != row {
			if err := r.rgroups.enter(r.okBuf2, r.name, r.leftKeys, row); err != nil {
				return err
			}
			r.entered = row
		}
		c := bytes.Compare(r.okBuf2, lkey)
		if c > 0 {
			return nil
		}
		// Open the group (its t starts afresh); if it sorts before lkey,
		// skip all of it.
		var zero V
		r.group, r.last, r.hasLast = r.curIDs[i], zero, false
		if r.group < 0 {
			// A run of NULL keys: never matches; step over it.
			for r.curPos < r.curLen && r.curIDs[r.curPos] < 0 {
				r.curPos++
			}
			continue
		}
		if c == 0 {
			return nil
		}
		if err := r.closeGroup(ctx); err != nil {
			return err
		}
	}
}
