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
// ascends within a group (spec §4: "inputs both ordered by (by-keys..., t)
// may also be accepted; the result is the same"). The kernel then runs one
// group at a time: the right cursor never reads past its group, and the
// left and right groups are aligned by comparing order keys: byte strings
// that sort like the key tuples (memcomparable encoding).

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

// leftRow handles the group bookkeeping for left row i in key-major mode:
// a new left key closes the open right group and positions the right
// cursor on the new key's group, if the right input has one.
func (r *rightState) leftRow(ctx context.Context, keyCols []arrow.Array, lt *onColumn, i int) error {
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
	if !same {
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
		r.leftLast = 0
		if err := r.openGroup(ctx, r.okBuf, kb.null[i]); err != nil {
			return err
		}
	}
	if lt.ok(i) {
		t := lt.t[i]
		if t < r.leftLast {
			return sqlerr.New(sqlerr.DataException,
				"ASOF input %s is not ordered by (%s): row %d has a lower %s than the row before it in its key group",
				r.leftName, r.leftKeys, r.leftSeen+int64(i)+1, r.sp.leftTName)
		}
		r.leftLast = t
	}
	return nil
}

// closeGroup drops the open group's state (its key never recurs) and skips
// its unread rows.
func (r *rightState) closeGroup(ctx context.Context) error {
	if r.group < 0 {
		return nil
	}
	g := r.group
	if lr := r.latest[g]; lr.Src >= 0 {
		r.unref(lr.Src)
		r.latest[g] = noMatch
		r.live--
	}
	mask := int64(len(r.q) - 1)
	for ; r.qLen > 0; r.qLen-- {
		r.unref(r.q[r.qStart&mask].r.Src)
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
func (r *rightState) openGroup(ctx context.Context, lkey []byte, null bool) error {
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
		// Open the group; if it sorts before lkey, skip all of it.
		r.group, r.last = r.curIDs[i], 0
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

// advanceInGroup is advanceTo's loop for key-major mode: peek stops at the
// end of the open group.
func (r *rightState) advanceInGroup(ctx context.Context, b uint64) error {
	for {
		t, ok, err := r.peek(ctx)
		if err != nil || !ok || t > b {
			return err
		}
		k, rf, t := r.take()
		if k >= 0 && r.trackLatest {
			r.setLatest(k, rf, t)
		}
	}
}
