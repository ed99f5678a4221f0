package asof

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/asofsql/asofsql/sqlerr"
)

// By-keys are encoded per row, then interned into a key dictionary that
// hands out dense ids (keyDict: one per group of right inputs that match on
// the same left key columns). A single key that fits in eight bytes is
// encoded as one uint64 (no hashing of bytes at all); anything else
// (strings, several columns, decimals) as a byte string. Both tables confirm
// every hash hit by comparing the full encoded key, so a hash collision can
// never join two different keys.

type keyClass uint8

const (
	keySigned keyClass = iota
	keyUnsigned
	keyFloat
	keyBool
	keyDate32
	keyDate64
	keyTimestamp
	keyDecimal
	keyString
	keyBinary
)

type keyCol struct {
	class keyClass
	unit  arrow.TimeUnit
	scale int32
	// conv converts this side's values to the class both sides compare
	// in (PostgreSQL compares bigint with double precision as doubles, and
	// with numeric as numerics).
	conv keyConv
}

type keyConv uint8

const (
	convNone keyConv = iota
	convIntToFloat
	convIntToDec
	convDecToFloat
)

// commonKey decides how a left and a right key column of different
// classes compare, as PostgreSQL does: an integer against a float as
// floats, against a numeric as numerics (exact: the integer scaled to
// the numeric's scale, at most 18 so every int64 fits), a numeric against
// a float as floats. ok is false when they do not compare.
func commonKey(l, r keyCol) (lc, rc keyCol, ok bool) {
	isInt := func(c keyCol) bool { return c.class == keySigned }
	switch {
	case isInt(l) && r.class == keyFloat:
		return keyCol{class: keyFloat, conv: convIntToFloat}, r, true
	case l.class == keyFloat && isInt(r):
		return l, keyCol{class: keyFloat, conv: convIntToFloat}, true
	case isInt(l) && r.class == keyDecimal && r.scale <= maxLineDecimalPrecision:
		return keyCol{class: keyDecimal, scale: r.scale, conv: convIntToDec}, r, true
	case l.class == keyDecimal && l.scale <= maxLineDecimalPrecision && isInt(r):
		return l, keyCol{class: keyDecimal, scale: l.scale, conv: convIntToDec}, true
	case l.class == keyDecimal && r.class == keyFloat:
		return keyCol{class: keyFloat, scale: l.scale, conv: convDecToFloat}, r, true
	case l.class == keyFloat && r.class == keyDecimal:
		return l, keyCol{class: keyFloat, scale: r.scale, conv: convDecToFloat}, true
	}
	return l, r, false
}

// convKey is the uint64 code of row i of a converted fixed-width key.
func convKey(k keyCol, c arrow.Array, i int) uint64 {
	switch k.conv {
	case convIntToFloat:
		return floatCode(float64(int64(fixedKey(c, i))))
	case convDecToFloat:
		return floatCode(c.(*array.Decimal128).Value(i).ToFloat64(k.scale))
	}
	return fixedKey(c, i)
}

// convDec is row i of an integer key column scaled to a numeric key.
func convDec(k keyCol, c arrow.Array, i int) decimal128.Num {
	if k.conv == convIntToDec {
		return decimal128.FromI64(int64(fixedKey(c, i))).Mul(decimal128.GetScaleMultiplier(int(k.scale)))
	}
	return c.(*array.Decimal128).Value(i)
}

func keyColOf(dt arrow.DataType) (keyCol, bool) {
	switch d := dt.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type:
		return keyCol{class: keySigned}, true
	case *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type:
		return keyCol{class: keyUnsigned}, true
	case *arrow.Float32Type, *arrow.Float64Type:
		return keyCol{class: keyFloat}, true
	case *arrow.BooleanType:
		return keyCol{class: keyBool}, true
	case *arrow.Date32Type:
		return keyCol{class: keyDate32}, true
	case *arrow.Date64Type:
		return keyCol{class: keyDate64}, true
	case *arrow.TimestampType:
		return keyCol{class: keyTimestamp, unit: d.Unit}, true
	case *arrow.Decimal128Type:
		return keyCol{class: keyDecimal, scale: d.Scale}, true
	case *arrow.StringType, *arrow.LargeStringType:
		return keyCol{class: keyString}, true
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.FixedSizeBinaryType:
		return keyCol{class: keyBinary}, true
	}
	return keyCol{}, false
}

// keyEncoding says how the by-keys of one right input and the left input
// are encoded; both sides produce identical encodings for equal keys.
type keyEncoding struct {
	cols []keyCol
	u64  bool // a single key of at most eight bytes
	// nullSafe marks the keys compared with IS NOT DISTINCT FROM: a NULL
	// there is a value of its own (a tag byte before every value), not
	// a row that matches nothing. nil when there are none.
	nullSafe []bool
}

// newKeyEncoding returns the right input's encoding and the left input's:
// they differ only in the conversions of keys of different types.
func newKeyEncoding(left, right *arrow.Schema, lk, rk []int, nullSafe []bool, leftName, rightName string) (keyEncoding, keyEncoding, error) {
	enc := keyEncoding{cols: make([]keyCol, len(lk))}
	lenc := keyEncoding{cols: make([]keyCol, len(lk))}
	if slices.Contains(nullSafe, true) {
		if len(nullSafe) != len(lk) {
			return enc, lenc, sqlerr.New(sqlerr.InternalError, "ASOF join with %s: %d keys but %d null-safe flags", rightName, len(lk), len(nullSafe))
		}
		enc.nullSafe = nullSafe
	}
	for i := range lk {
		if err := checkCol(left, lk[i], leftName, "key"); err != nil {
			return enc, lenc, err
		}
		if err := checkCol(right, rk[i], rightName, "key"); err != nil {
			return enc, lenc, err
		}
		lf, rf := left.Field(lk[i]), right.Field(rk[i])
		lc, lok := keyColOf(lf.Type)
		rc, rok := keyColOf(rf.Type)
		if !lok {
			return enc, lenc, sqlerr.New(sqlerr.FeatureNotSupported, "type %s of %s.%s cannot be an ASOF by-key", lf.Type, leftName, lf.Name)
		}
		if !rok {
			return enc, lenc, sqlerr.New(sqlerr.FeatureNotSupported, "type %s of %s.%s cannot be an ASOF by-key", rf.Type, rightName, rf.Name)
		}
		if lc != rc {
			var ok bool
			if lc, rc, ok = commonKey(lc, rc); ok {
				enc.cols[i], lenc.cols[i] = rc, lc
				continue
			}
			return enc, lenc, sqlerr.New(sqlerr.DatatypeMismatch,
				"ASOF by-keys are not comparable: %s.%s is %s but %s.%s is %s",
				leftName, lf.Name, lf.Type, rightName, rf.Name, rf.Type)
		}
		enc.cols[i], lenc.cols[i] = lc, lc
	}
	enc.u64 = len(enc.cols) == 0 || (len(enc.cols) == 1 && enc.cols[0].class != keyDecimal &&
		enc.cols[0].class != keyString && enc.cols[0].class != keyBinary && enc.nullSafe == nil)
	lenc.u64, lenc.nullSafe = enc.u64, enc.nullSafe
	return enc, lenc, nil
}

// keyBatch is one batch's encoded keys. null[i] marks a row with a NULL in
// any key column (it matches nothing).
type keyBatch struct {
	n    int
	u64  []uint64
	buf  []byte
	offs []int32 // row i's key is buf[offs[i]:offs[i+1]]
	// full is buf extended as far as reads may go (buf[:k], k >=
	// len(buf)): short keys are read with whole-word loads (wordsAt).
	// The bytes past len(buf) are the array's or the scratch's own, and
	// are masked off.
	full []byte
	null []bool
	// anyNull: some row is NULL (null has a true); false lets lookups skip
	// reading null.
	anyNull bool
	// shared marks buf and offs as borrowed from an array (valid while
	// the batch is held), not owned scratch; sharedU64 the same for u64.
	shared    bool
	sharedU64 bool
}

// offsets32 is a string or binary array with 32-bit offsets.
type offsets32 interface {
	ValueOffsets() []int32
	ValueBytes() []byte
}

func (kb *keyBatch) key(i int) []byte { return kb.buf[kb.offs[i]:kb.offs[i+1]] }

// encode fills kb with the keys of rows in cols (the key columns of one
// batch, in key order).
func (e *keyEncoding) encode(cols []arrow.Array, n int, kb *keyBatch) {
	kb.n = n
	if cap(kb.null) < n {
		boolScratch.put(kb.null)
		kb.null = boolScratch.get(n)
	}
	kb.null = kb.null[:n]
	clear(kb.null)
	kb.anyNull = false
	for ci, c := range cols {
		if c.NullN() == 0 || e.nullSafe != nil && e.nullSafe[ci] {
			continue
		}
		kb.anyNull = true
		for i := 0; i < n; i++ {
			if c.IsNull(i) {
				kb.null[i] = true
			}
		}
	}
	if kb.sharedU64 {
		// u64 was an array's values: never write into it.
		kb.u64, kb.sharedU64 = nil, false
	}
	if len(cols) == 0 {
		// No by-keys: every row has the same (empty) key.
		if cap(kb.u64) < n {
			u64Scratch.put(kb.u64)
			kb.u64 = u64Scratch.get(n)
		}
		kb.u64 = kb.u64[:n]
		clear(kb.u64)
		return
	}
	if e.u64 && e.cols[0].conv != convNone {
		if cap(kb.u64) < n {
			u64Scratch.put(kb.u64)
			kb.u64 = u64Scratch.get(n)
		}
		kb.u64 = kb.u64[:n]
		for i := range kb.u64 {
			kb.u64[i] = convKey(e.cols[0], cols[0], i)
		}
		return
	}
	if e.u64 {
		if v, _, ok := words64(cols[0]); ok {
			// 64-bit integers are their own code: read them in place
			// instead of copying a batch's worth through the cache.
			kb.u64, kb.sharedU64 = v, true
			return
		}
		if cap(kb.u64) < n {
			u64Scratch.put(kb.u64)
			kb.u64 = u64Scratch.get(n)
		}
		kb.u64 = kb.u64[:n]
		fixedKeys(cols[0], kb.u64)
		return
	}
	if kb.shared {
		// buf and offs were an array's: never write into them.
		kb.buf, kb.offs, kb.shared = nil, nil, false
	}
	if len(cols) == 1 && (e.cols[0].class == keyString || e.cols[0].class == keyBinary) && e.nullSafe == nil && n > 0 {
		if a, ok := cols[0].(offsets32); ok {
			// One variable-width key, zero copy: the array's own
			// offsets (absolute positions in its values buffer, so buf
			// is the whole buffer: no rebasing pass) and bytes. full
			// is the buffer too: immutable like the keys, so the last
			// keys are read in place as well.
			i32Scratch.put(kb.offs)
			kb.offs = a.ValueOffsets()
			kb.buf = a.ValueBytes()[:0]
			if bufs := cols[0].Data().Buffers(); len(bufs) > 2 && bufs[2] != nil {
				kb.buf = bufs[2].Bytes()
			}
			kb.full = kb.buf
			kb.shared = true
			return
		}
	}
	kb.buf = kb.buf[:0]
	if cap(kb.offs) < n+1 {
		i32Scratch.put(kb.offs)
		kb.offs = i32Scratch.get(n + 1)
	}
	kb.offs = kb.offs[:n+1]
	if len(cols) == 1 && (e.cols[0].class == keyString || e.cols[0].class == keyBinary) && e.nullSafe == nil {
		// One variable-width key: its bytes are the key, whatever the
		// array's offset width, so string and large_string agree.
		for i := 0; i < n; i++ {
			kb.offs[i] = int32(len(kb.buf))
			kb.buf = append(kb.buf, varValue(cols[0], i)...)
		}
		kb.offs[n] = int32(len(kb.buf))
		kb.full = kb.buf[:cap(kb.buf)]
		return
	}
	for i := 0; i < n; i++ {
		kb.offs[i] = int32(len(kb.buf))
		if kb.null[i] {
			continue
		}
		for ci, c := range cols {
			if e.nullSafe != nil && e.nullSafe[ci] {
				// NULL is tag 0 alone, a value tag 1 then the value.
				if c.IsNull(i) {
					kb.buf = append(kb.buf, 0)
					continue
				}
				kb.buf = append(kb.buf, 1)
			}
			switch e.cols[ci].class {
			case keyString, keyBinary:
				v := varValue(c, i)
				kb.buf = binary.LittleEndian.AppendUint32(kb.buf, uint32(len(v)))
				kb.buf = append(kb.buf, v...)
			case keyDecimal:
				d := convDec(e.cols[ci], c, i)
				kb.buf = binary.LittleEndian.AppendUint64(kb.buf, d.LowBits())
				kb.buf = binary.LittleEndian.AppendUint64(kb.buf, uint64(d.HighBits()))
			default:
				kb.buf = binary.LittleEndian.AppendUint64(kb.buf, convKey(e.cols[ci], c, i))
			}
		}
	}
	kb.offs[n] = int32(len(kb.buf))
	kb.full = kb.buf[:cap(kb.buf)]
}

func varValue(c arrow.Array, i int) []byte {
	switch a := c.(type) {
	case *array.String:
		return []byte(a.Value(i))
	case *array.LargeString:
		return []byte(a.Value(i))
	case *array.Binary:
		return a.Value(i)
	case *array.LargeBinary:
		return a.Value(i)
	case *array.FixedSizeBinary:
		return a.Value(i)
	}
	panic("asof: unexpected variable-width key array " + c.DataType().String())
}

// words64 returns the values of a 64-bit integer column (int64, uint64,
// timestamp, date64, time64) as their bits, without copying: the uint64 key
// codes fixedKeys would compute. signed says the values are signed.
func words64(c arrow.Array) (w []uint64, signed bool, ok bool) {
	var v []int64
	switch a := c.(type) {
	case *array.Uint64:
		return a.Uint64Values(), false, true
	case *array.Int64:
		v = a.Int64Values()
	case *array.Timestamp:
		v = arrow.Int64Traits.CastFromBytes(arrow.TimestampTraits.CastToBytes(a.TimestampValues()))
	case *array.Date64:
		v = arrow.Int64Traits.CastFromBytes(arrow.Date64Traits.CastToBytes(a.Date64Values()))
	case *array.Time64:
		v = arrow.Int64Traits.CastFromBytes(arrow.Time64Traits.CastToBytes(a.Time64Values()))
	default:
		return nil, false, false
	}
	return arrow.Uint64Traits.CastFromBytes(arrow.Int64Traits.CastToBytes(v)), true, true
}

// fixedKeys encodes a whole fixed-width key column; equal SQL values give
// equal codes (integers widened, -0 = 0, every NaN equal as in Postgres).
func fixedKeys(c arrow.Array, out []uint64) {
	switch a := c.(type) {
	case *array.Int64:
		for i, v := range a.Int64Values() {
			out[i] = uint64(v)
		}
	case *array.Int32:
		for i, v := range a.Int32Values() {
			out[i] = uint64(int64(v))
		}
	case *array.Uint64:
		copy(out, a.Uint64Values())
	case *array.Timestamp:
		for i, v := range a.TimestampValues() {
			out[i] = uint64(v)
		}
	case *array.Date32:
		for i, v := range a.Date32Values() {
			out[i] = uint64(int64(v))
		}
	default:
		for i := range out {
			out[i] = fixedKey(c, i)
		}
	}
}

func fixedKey(c arrow.Array, i int) uint64 {
	switch a := c.(type) {
	case *array.Int8:
		return uint64(int64(a.Value(i)))
	case *array.Int16:
		return uint64(int64(a.Value(i)))
	case *array.Int32:
		return uint64(int64(a.Value(i)))
	case *array.Int64:
		return uint64(a.Value(i))
	case *array.Uint8:
		return uint64(a.Value(i))
	case *array.Uint16:
		return uint64(a.Value(i))
	case *array.Uint32:
		return uint64(a.Value(i))
	case *array.Uint64:
		return a.Value(i)
	case *array.Float32:
		return floatCode(float64(a.Value(i)))
	case *array.Float64:
		return floatCode(a.Value(i))
	case *array.Boolean:
		if a.Value(i) {
			return 1
		}
		return 0
	case *array.Date32:
		return uint64(int64(a.Value(i)))
	case *array.Date64:
		return uint64(int64(a.Value(i)))
	case *array.Timestamp:
		return uint64(int64(a.Value(i)))
	}
	panic("asof: unexpected fixed-width key array " + c.DataType().String())
}

func floatCode(f float64) uint64 {
	switch {
	case f != f:
		return 0x7ff8000000000001
	case f == 0:
		return 0
	}
	return math.Float64bits(f)
}

// keyTable interns encoded keys into dense ids 0, 1, 2, ...
type keyTable struct {
	u64   bool
	slots []int32 // open addressing, -1 empty
	mask  uint64
	shift uint // 64 - log2(len(slots))
	// u64 mode
	keys []uint64
	// direct[k] is the id of small key k (below directLimit), -1 when
	// absent: small keys (symbol ids, sensor numbers) skip the hash table.
	// It covers every small key interned so far; a small key at or beyond
	// its length is absent. nHashed counts the keys in slots.
	direct  []int32
	nHashed int
	// byte mode (textkeys.go): groups is the open-addressing table
	// (mask and shift index groups of four slots); words, hashes and offs
	// are per id.
	groups []slotGroup
	words  []keyWords
	hashes []uint64
	offs   []int // key id's bytes are arena[offs[id]:offs[id+1]]
	arena  []byte
	seed   maphash.Seed
	s0, s1 uint64 // short keys' hash seeds
	hmask  uint64 // ANDed into every byte key's hash: ^Options.hashClear
	// test hooks
	hashU64   func(uint64) uint64
	hashBytes func([]byte) uint64
}

func newKeyTable(u64 bool, opts *Options) *keyTable {
	t := &keyTable{u64: u64, seed: maphash.MakeSeed(), hashU64: opts.hashU64, hashBytes: opts.hashBytes}
	if u64 {
		t.slots = make([]int32, 64)
		for i := range t.slots {
			t.slots[i] = -1
		}
		t.mask, t.shift = 63, 64-6
	} else {
		t.groups = make([]slotGroup, 16)
		t.mask, t.shift = 15, 64-4
		t.s0, t.s1 = rand.Uint64(), rand.Uint64()
		t.hmask = ^opts.hashClear
	}
	t.offs = []int{0}
	return t
}

func (t *keyTable) len() int {
	if t.u64 {
		return len(t.keys)
	}
	return len(t.hashes)
}

func (t *keyTable) hu(k uint64) uint64 {
	if t.hashU64 != nil {
		return t.hashU64(k)
	}
	// Fibonacci hashing; the table indexes with the high bits (slot), which
	// spreads sequential and clustered integer keys evenly.
	return k * fibMul
}

// fibMul is 2^64 divided by the golden ratio (Fibonacci hashing).
const fibMul = 0x9e3779b97f4a7c15

// slot maps a hash to a table position using its high bits (u64 mode).
func (t *keyTable) slot(h uint64) uint64 { return (h >> t.shift) & t.mask }

// directLimit bounds the keys the direct index covers (256 KB of int32s at
// most), and directOn says whether it is used: not under the test hook that
// forces hash collisions, which must see every key hashed.
const directLimit = 1 << 16

func (t *keyTable) directOn() bool { return t.hashU64 == nil }

// findU64 returns k's id or -1.
func (t *keyTable) findU64(k uint64) int32 {
	if k < directLimit && t.directOn() {
		if k < uint64(len(t.direct)) {
			return t.direct[k]
		}
		return -1
	}
	for p := t.slot(t.hu(k)); ; p = (p + 1) & t.mask {
		id := t.slots[p]
		if id < 0 || t.keys[id] == k {
			return id
		}
	}
}

func (t *keyTable) internU64(k uint64) int32 {
	if k < directLimit && t.directOn() {
		if k >= uint64(len(t.direct)) {
			size := max(1024, len(t.direct))
			for uint64(size) <= k {
				size *= 2
			}
			grown := make([]int32, size)
			n := copy(grown, t.direct)
			for i := n; i < size; i++ {
				grown[i] = -1
			}
			t.direct = grown
		}
		if id := t.direct[k]; id >= 0 {
			return id
		}
		id := int32(len(t.keys))
		t.keys = append(t.keys, k)
		t.direct[k] = id
		return id
	}
	p := t.slot(t.hu(k))
	for ; ; p = (p + 1) & t.mask {
		id := t.slots[p]
		if id < 0 {
			break
		}
		if t.keys[id] == k {
			return id
		}
	}
	id := int32(len(t.keys))
	t.keys = append(t.keys, k)
	t.slots[p] = id
	t.nHashed++
	t.maybeGrow()
	return id
}

func (t *keyTable) maybeGrow() {
	if !t.u64 {
		t.growBytes()
		return
	}
	// Keep the load factor at or below 1/4: short probe sequences keep
	// the probe loop's exit branch predictable, and the table stays small
	// (16 bytes a key).
	if uint64(t.nHashed)*4 < t.mask+1 {
		return
	}
	size := (t.mask + 1) * 2
	t.slots = make([]int32, size)
	for i := range t.slots {
		t.slots[i] = -1
	}
	t.mask = size - 1
	t.shift--
	for id := 0; id < t.len(); id++ {
		if t.keys[id] < directLimit && t.directOn() {
			continue // in direct, not in slots
		}
		p := t.slot(t.hu(t.keys[id]))
		for t.slots[p] >= 0 {
			p = (p + 1) & t.mask
		}
		t.slots[p] = int32(id)
	}
}

// findU64Rows sets ids[i] to the id of row i of kb (u64 mode) for rows
// [from, len(ids)): -1 when NULL or absent. With onlyAbsent, rows whose id
// is already set (>= 0) are left alone. It reports whether a non-NULL key
// was absent. It is lookup in one loop, with the
// table's fields in registers and the hash written out: per row, the calls
// and the re-reads of the table's fields cost as much as the probe itself.
func (t *keyTable) findU64Rows(kb *keyBatch, ids []int32, from int, onlyAbsent bool) (miss bool) {
	if t.hashU64 != nil {
		// A test hook hashes: keep the general path.
		for i := from; i < len(ids); i++ {
			if !onlyAbsent || ids[i] < 0 {
				ids[i] = t.lookup(kb, i)
				miss = miss || (ids[i] < 0 && !kb.null[i])
			}
		}
		return miss
	}
	slots, keys, mask, shift := t.slots, t.keys, t.mask, t.shift
	direct := t.direct
	nd := uint64(len(direct))
	u, null := kb.u64[:len(ids)], kb.null[:len(ids)]
	// m gathers the ids' sign bits: negative when some key was absent.
	var m int32
	i := from
	if !onlyAbsent && !kb.anyNull {
		// The common case, written out: no NULLs, small keys.
		for ; i < len(ids); i++ {
			k := u[i]
			if k >= nd {
				break
			}
			id := direct[k]
			ids[i] = id
			m |= id
		}
	}
	for ; i < len(ids); i++ {
		if onlyAbsent && ids[i] >= 0 {
			continue
		}
		if null[i] {
			ids[i] = -1
			continue
		}
		k := u[i]
		if k < nd {
			ids[i] = direct[k]
			m |= ids[i]
			continue
		}
		if k < directLimit {
			ids[i] = -1 // small keys are all in direct
			m = -1
			continue
		}
		p := ((k * fibMul) >> shift) & mask
		for {
			id := slots[p]
			if id < 0 || keys[id] == k {
				ids[i] = id
				m |= id
				break
			}
			p = (p + 1) & mask
		}
	}
	return m < 0
}

// lookup finds the id of row i of kb, -1 when absent or NULL.
func (t *keyTable) lookup(kb *keyBatch, i int) int32 {
	if kb.null[i] {
		return -1
	}
	if t.u64 {
		return t.findU64(kb.u64[i])
	}
	return t.findRow(kb, i)
}

// keyDict is one key dictionary shared by every right input that matches on
// the same left key columns (key-major inputs keep their own). Each right
// input interns its rows' keys into it and keeps its per-key state in slices
// indexed by id; the join encodes and looks up each left batch's keys once,
// and every input of the group reads the same ids. So per right input and
// left row the key costs an array index, not a hash probe: with four right
// inputs (S6) the probe ran four times per left row before.
//
// Right inputs run on their own goroutines, so the table is guarded: a whole
// batch is looked up under the read lock, and only its misses are inserted
// under the write lock (after the first batches of a stream, none). Ids never
// change once given, and size is published after the insertions, so a
// reader that saw size n may index any id below n.
type keyDict struct {
	mu   sync.RWMutex
	t    *keyTable
	size atomic.Int64
}

func newKeyDict(u64 bool, opts *Options) *keyDict {
	return &keyDict{t: newKeyTable(u64, opts)}
}

func (d *keyDict) len() int { return int(d.size.Load()) }

// intern assigns ids to every row of kb (-1 for NULL keys).
// The lookups hash each key as they read it (findBytesRows says why).
func (d *keyDict) intern(kb *keyBatch, ids []int32) {
	d.mu.RLock()
	miss := false
	if d.t.u64 {
		miss = d.t.findU64Rows(kb, ids[:kb.n], 0, false)
	} else {
		miss = d.t.findBytesRows(kb, ids[:kb.n], 0, false)
	}
	d.mu.RUnlock()
	if !miss {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := 0; i < kb.n; i++ {
		if ids[i] >= 0 || kb.null[i] {
			continue
		}
		if d.t.u64 {
			ids[i] = d.t.internU64(kb.u64[i])
		} else {
			b := kb.key(i)
			ids[i] = d.t.internBytes(b, d.t.hashKey(b))
		}
	}
	d.size.Store(int64(d.t.len()))
}

// lookup looks up rows [from, len(ids)) of kb whose id is -1 (all of them
// on a fresh slice) and returns the dictionary's size at that moment: every
// key not found is absent from the first size ids.
func (d *keyDict) lookup(kb *keyBatch, ids []int32, from int) int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.t.u64 {
		d.t.findU64Rows(kb, ids, from, true)
		return d.t.len()
	}
	d.t.findBytesRows(kb, ids, from, true)
	return d.t.len()
}

// lookupAll sets every row's id (-1 when absent or NULL) and returns the
// dictionary's size at that moment, as lookup does on a fresh slice.
func (d *keyDict) lookupAll(kb *keyBatch, ids []int32) int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.t.u64 {
		d.t.findU64Rows(kb, ids, 0, false)
		return d.t.len()
	}
	d.t.findBytesRows(kb, ids, 0, false)
	return d.t.len()
}

// leftKeys is one left batch's by-keys for one dictionary: encoded, hashed
// and looked up once by the join, then read (never written) by every right
// input of the dictionary's group.
type leftKeys struct {
	kb    keyBatch
	ids   []int32 // -1: NULL, or absent when looked up
	known int     // the dictionary's size when ids were looked up
}

// load encodes and looks up the keys of cols (n rows).
func (lk *leftKeys) load(enc *keyEncoding, d *keyDict, cols []arrow.Array, n int) {
	enc.encode(cols, n, &lk.kb)
	if cap(lk.ids) < n {
		i32Scratch.put(lk.ids)
		lk.ids = i32Scratch.get(n)
	}
	lk.ids = lk.ids[:n]
	lk.known = d.lookupAll(&lk.kb, lk.ids)
}
