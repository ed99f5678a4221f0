package asof

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
)

// The byte mode of keyTable interns keys encoded as bytes: text and binary
// keys (read in place from the Arrow array), and every key of several
// columns, decimals or null-safe tags (encoded into scratch).
//
// A short key (at most shortKey bytes, as most symbols, tickers and codes
// are) is held as keyWords: its bytes as two zero-padded little-endian
// words and its length. Hashing it is one 128-bit multiply of the words
// (no call, no loop), and comparing it with an interned key is three word
// compares (no call to a byte compare). A longer key is hashed with
// maphash and compared byte by byte against the arena.
//
// The table is open addressing over groups of four slots (slotGroup): a
// group holds four 16-bit tags (bits of the keys' hashes) in one word and
// the four ids beside them. A probe compares its tag with the group's four
// at once (matchLanes, a few word operations) and looks at an interned key
// only when a tag matches: after a match the key is always compared in
// full, so a collision of hashes or of tags can never join two different
// keys (TestTextKeyCollisions forces both). Groups rather than single
// slots because of branch prediction: with single slots, the keys that
// another key displaced from their first slot (a fifth of them at the
// load factors used) took the probe loop's second turn, and a row whose
// key did so at random cost a mispredicted branch; a key leaves its
// group only when the group is full, which at a load of at most a half
// is rare.

// shortKey is the length up to which a key is held as keyWords.
const shortKey = 16

// keyWords is an interned key's comparison form. For n <= shortKey, (w0,
// w1, n) is the key: its bytes zero-padded to 16, the length telling "a"
// from "a\x00". For a longer key only n is meaningful (its bytes are in the
// arena).
type keyWords struct {
	w0, w1 uint64
	n      int32
}

// lowBytes is the mask of the k low bytes of a word, k in [0, 8] (a Go
// shift by 64 gives 0).
func lowBytes(k int) uint64 { return ^uint64(0) >> (64 - 8*uint(k)) }

// keyMasks[n] masks the two words of an n-byte key to its bytes: a table
// read costs the lookup loop fewer instructions than two lowBytes.
var keyMasks = func() (m [shortKey + 1][2]uint64) {
	for n := range m {
		m[n] = [2]uint64{lowBytes(min(n, 8)), lowBytes(max(n-8, 0))}
	}
	return m
}()

// wordsAt returns the words of the n-byte key at full[off:off+n], n <=
// shortKey. full may extend past the batch's keys (keyBatch.full): a key
// with 16 readable bytes from its start is read with two loads and masked
// to its length, one closer to the end is copied out first. Both give the
// same words (TestWordsAt).
func wordsAt(full []byte, off, n int) (w0, w1 uint64) {
	if off+shortKey <= len(full) {
		b := full[off : off+shortKey]
		w0 = binary.LittleEndian.Uint64(b[:8]) & lowBytes(min(n, 8))
		w1 = binary.LittleEndian.Uint64(b[8:]) & lowBytes(max(n-8, 0))
		return w0, w1
	}
	var tmp [shortKey]byte
	copy(tmp[:], full[off:off+n])
	return binary.LittleEndian.Uint64(tmp[:8]), binary.LittleEndian.Uint64(tmp[8:])
}

// shortHash hashes a short key's words: the folded 128-bit product of the
// seeded words (wyhash's mix), whose high bits (the slot) and low bits
// (the tag) both depend on every byte.
func shortHash(s0, s1, w0, w1 uint64, n int) uint64 {
	hi, lo := bits.Mul64(w0^s0, w1^s1^uint64(n))
	return hi ^ lo
}

// hashKey is the hash of key b (the table's hashBytes hook, when set, for
// every key).
func (t *keyTable) hashKey(b []byte) uint64 {
	if t.hashBytes != nil {
		return t.hashBytes(b) & t.hmask
	}
	if len(b) <= shortKey {
		w0, w1 := wordsAt(b, 0, len(b))
		return shortHash(t.s0, t.s1, w0, w1, len(b)) & t.hmask
	}
	return maphash.Bytes(t.seed, b) & t.hmask
}

// slotGroup is four slots of the byte-mode table: ctrl holds their tags
// (tagOf, never 0) in its four 16-bit lanes, 0 for an empty slot, and ids
// their key ids. Slots fill in lane order and are never emptied.
type slotGroup struct {
	ctrl uint64
	ids  [4]int32
}

const (
	lanes16 = 0x0001000100010001
	low15   = 0x7fff7fff7fff7fff
	high16  = 0x8000800080008000
)

// tagOf is the tag of hash h: its low 16 bits (the group comes from its
// high bits), never 0.
func tagOf(h uint64) uint64 { return h&0xffff | 1 }

// matchLanes returns the lanes of ctrl equal to tag (tag 0: the empty
// lanes) as the high bit of each such 16-bit lane. It is exact: a lane's
// sum below cannot carry into the next lane.
func matchLanes(ctrl, tag uint64) uint64 {
	x := ctrl ^ tag*lanes16
	return ^((x&low15 + low15) | x) & high16
}

// group returns the home group of hash h.
func (t *keyTable) group(h uint64) uint64 { return (h >> t.shift) & t.mask }

// findBytes returns the id of key b with hash h, or -1.
func (t *keyTable) findBytes(b []byte, h uint64) int32 {
	if len(b) <= shortKey {
		w0, w1 := wordsAt(b, 0, len(b))
		return t.findShort(w0, w1, len(b), h)
	}
	return t.findLong(b, h)
}

// findShort returns the id of the short key (w0, w1, n) with hash h, or -1.
func (t *keyTable) findShort(w0, w1 uint64, n int, h uint64) int32 {
	tag := tagOf(h)
	for g := t.group(h); ; g = (g + 1) & t.mask {
		grp := &t.groups[g]
		for m := matchLanes(grp.ctrl, tag); m != 0; m &= m - 1 {
			id := grp.ids[bits.TrailingZeros64(m)>>4]
			if w := &t.words[id]; w.w0 == w0 && w.w1 == w1 && w.n == int32(n) {
				return id
			}
		}
		if matchLanes(grp.ctrl, 0) != 0 {
			return -1 // the key would be in this group
		}
	}
}

// findLong returns the id of the long key b with hash h, or -1.
func (t *keyTable) findLong(b []byte, h uint64) int32 {
	tag := tagOf(h)
	for g := t.group(h); ; g = (g + 1) & t.mask {
		grp := &t.groups[g]
		for m := matchLanes(grp.ctrl, tag); m != 0; m &= m - 1 {
			id := grp.ids[bits.TrailingZeros64(m)>>4]
			if int(t.words[id].n) == len(b) && bytes.Equal(t.arena[t.offs[id]:t.offs[id+1]], b) {
				return id
			}
		}
		if matchLanes(grp.ctrl, 0) != 0 {
			return -1
		}
	}
}

// internBytes returns the id of key b with hash h, interning it if absent.
func (t *keyTable) internBytes(b []byte, h uint64) int32 {
	if id := t.findBytes(b, h); id >= 0 {
		return id
	}
	id := int32(len(t.hashes))
	var w keyWords
	if len(b) <= shortKey {
		w.w0, w.w1 = wordsAt(b, 0, len(b))
	}
	w.n = int32(len(b))
	t.words = append(t.words, w)
	t.hashes = append(t.hashes, h)
	t.arena = append(t.arena, b...)
	t.offs = append(t.offs, len(t.arena))
	t.place(h, id)
	t.nHashed++
	t.maybeGrow()
	return id
}

// place puts id with hash h in the first free slot of its probe sequence.
func (t *keyTable) place(h uint64, id int32) {
	for g := t.group(h); ; g = (g + 1) & t.mask {
		grp := &t.groups[g]
		if m := matchLanes(grp.ctrl, 0); m != 0 {
			lane := bits.TrailingZeros64(m) >> 4
			grp.ctrl |= tagOf(h) << (16 * lane)
			grp.ids[lane] = id
			return
		}
	}
}

// growBytes doubles the groups when the slots are half full: a fuller
// table overflows more groups (see slotGroup).
func (t *keyTable) growBytes() {
	if uint64(t.nHashed)*2 < (t.mask+1)*4 {
		return
	}
	size := (t.mask + 1) * 2
	t.groups = make([]slotGroup, size)
	t.mask = size - 1
	t.shift--
	for id, h := range t.hashes {
		t.place(h, int32(id))
	}
}

// findBytesRows is findU64Rows for byte keys: it sets ids[i] to the id of
// row i of kb for rows [from, len(ids)), -1 when NULL or absent (with
// onlyAbsent, only rows whose id is < 0), and reports whether a non-NULL
// key was absent. Its loop is written out for the common row, a short key
// read in place, hashed and found in its home group, with the table's
// fields in locals; any other row takes findRow. The hashes are computed
// here, not kept: a batch's keys are read once, and its rows' hashes (8
// bytes a row written and read back) cost more memory traffic than
// hashing again the rare row that needs it.
func (t *keyTable) findBytesRows(kb *keyBatch, ids []int32, from int, onlyAbsent bool) (miss bool) {
	if onlyAbsent || kb.anyNull || t.hashBytes != nil {
		for i := from; i < len(ids); i++ {
			if onlyAbsent && ids[i] >= 0 {
				continue
			}
			if ids[i] = t.findRow(kb, i); ids[i] < 0 && !kb.null[i] {
				miss = true
			}
		}
		return miss
	}
	groups, words, mask, shift := t.groups, t.words, t.mask, t.shift
	s0, s1, hmask := t.s0, t.s1, t.hmask
	offs, full := kb.offs[:len(ids)+1], kb.full
	// m gathers the ids' sign bits: negative when some key was absent.
	var m int32
	for i := from; i < len(ids); i++ {
		off, l := int(offs[i]), int(offs[i+1]-offs[i])
		if uint(l) <= shortKey && off+shortKey <= len(full) {
			b := full[off : off+shortKey : off+shortKey]
			km := &keyMasks[l]
			w0 := binary.LittleEndian.Uint64(b[:8]) & km[0]
			w1 := binary.LittleEndian.Uint64(b[8:]) & km[1]
			hi, lo := bits.Mul64(w0^s0, w1^s1^uint64(l))
			h := (hi ^ lo) & hmask
			grp := &groups[(h>>shift)&mask]
			if mt := matchLanes(grp.ctrl, tagOf(h)); mt != 0 {
				k := grp.ids[(bits.TrailingZeros64(mt)>>4)&3]
				if w := &words[k]; w.w0 == w0 && w.w1 == w1 && w.n == int32(l) {
					ids[i] = k
					continue
				}
			}
			// Not the group's first match: probe in full.
			k := t.findShort(w0, w1, l, h)
			ids[i] = k
			m |= k
			continue
		}
		k := t.findRow(kb, i)
		ids[i] = k
		m |= k
	}
	return m < 0
}

// findRow returns the id of row i of kb, -1 when NULL or absent.
func (t *keyTable) findRow(kb *keyBatch, i int) int32 {
	if kb.null[i] {
		return -1
	}
	b := kb.key(i)
	return t.findBytes(b, t.hashKey(b))
}
