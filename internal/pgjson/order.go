package pgjson

import (
	"encoding/binary"
	"sort"
	"strconv"
	"strings"
)

// Compare orders two jsonb values as PostgreSQL's jsonb btree operator
// class does (compareJsonbContainers): by type first, null < string <
// number < boolean < array < object; an object with more pairs above one
// with fewer, then pair by pair in storage order (keys by length, then
// bytes), key before value; an array with more elements above one with
// fewer, then element by element; numbers by numeric value (1.0 = 1),
// strings bytewise (the C collation, as text compares here), false <
// true. A top-level scalar sorts like a one-element array that is less
// than any real one-element array, so the empty top-level array sorts
// below every scalar, as PostgreSQL's documentation warns.
//
//	Compare(ParseJSONB(`1.0`), ParseJSONB(`1`)) == 0
//	Compare(ParseJSONB(`[]`), ParseJSONB(`null`)) < 0
func Compare(a, b Value) int {
	aArr, bArr := a.Kind != Object, b.Kind != Object
	switch {
	case !aArr && !bArr:
		return compareValues(a, b)
	case aArr != bArr: // an array (or raw scalar) is below an object
		if aArr {
			return -1
		}
		return 1
	}
	aRaw, bRaw := a.Kind != Array, b.Kind != Array
	an, bn := 1, 1
	if !aRaw {
		an = len(a.Items)
	}
	if !bRaw {
		bn = len(b.Items)
	}
	res := 0
	if aRaw != bRaw {
		res = 1
		if aRaw {
			res = -1
		}
	}
	if an != bn {
		res = 1
		if an < bn {
			res = -1
		}
	}
	if res != 0 {
		return res
	}
	if aRaw { // both scalars
		return compareValues(a, b)
	}
	return compareValues(a, b) // both arrays of equal length
}

// typeRank is jbvType's order: null, string, numeric, bool, array, object.
func typeRank(k Kind) int {
	switch k {
	case Null:
		return 0
	case String:
		return 1
	case Number:
		return 2
	case Bool:
		return 3
	case Array:
		return 4
	}
	return 5
}

func compareValues(a, b Value) int {
	if a.Kind != b.Kind {
		return sign(typeRank(a.Kind) - typeRank(b.Kind))
	}
	switch a.Kind {
	case Null:
		return 0
	case String:
		return strings.Compare(a.Str, b.Str)
	case Number:
		return compareNumbers(a.Str, b.Str)
	case Bool:
		return sign(boolRank(a.Str) - boolRank(b.Str))
	case Array:
		if len(a.Items) != len(b.Items) {
			return sign(len(a.Items) - len(b.Items))
		}
		for i := range a.Items {
			if c := compareValues(a.Items[i], b.Items[i]); c != 0 {
				return c
			}
		}
		return 0
	}
	ai, bi := storageOrder(a), storageOrder(b)
	if len(ai) != len(bi) {
		return sign(len(ai) - len(bi))
	}
	for n := range ai {
		if c := strings.Compare(a.Keys[ai[n]], b.Keys[bi[n]]); c != 0 {
			return c
		}
		if c := compareValues(a.Items[ai[n]], b.Items[bi[n]]); c != 0 {
			return c
		}
	}
	return 0
}

func boolRank(s string) int {
	if s == "true" {
		return 1
	}
	return 0
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// storageOrder is the indexes of an object's members as jsonb stores
// them: the last of duplicate keys, keys by length then bytes. A value
// already in jsonb's normal form (every stored jsonb is) needs no sort.
func storageOrder(v Value) []int {
	idx := make([]int, 0, len(v.Keys))
	sorted := true
	for i, k := range v.Keys {
		if i > 0 && !keyLess(v.Keys[i-1], k) {
			sorted = false
		}
		idx = append(idx, i)
	}
	if sorted {
		return idx
	}
	last := make(map[string]int, len(v.Keys))
	idx = idx[:0]
	for i, k := range v.Keys {
		if j, ok := last[k]; ok {
			idx[j] = i
			continue
		}
		last[k] = len(idx)
		idx = append(idx, i)
	}
	sort.Slice(idx, func(x, y int) bool { return keyLess(v.Keys[idx[x]], v.Keys[idx[y]]) })
	return idx
}

func keyLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// decimal is a JSON number as sign, significant digits (no leading or
// trailing zeros; empty for zero) and the exponent e with value
// 0.digits × 10^e.
type decimal struct {
	neg    bool
	digits string
	exp    int
}

func parseDecimal(s string) decimal {
	var d decimal
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil { // beyond int: jsonb refuses such numbers on input
			if strings.HasPrefix(s[i+1:], "-") {
				e = -1 << 40
			} else {
				e = 1 << 40
			}
		}
		exp, s = e, s[:i]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i+1:]
	}
	all := strings.TrimLeft(intPart+frac, "0")
	// The point sits after intPart's digits; leading zeros removed shift it.
	lead := len(intPart+frac) - len(all)
	d.exp = exp + len(intPart) - lead
	d.digits = strings.TrimRight(all, "0")
	if d.digits == "" {
		d.neg, d.exp = false, 0
	}
	return d
}

func compareNumbers(a, b string) int {
	if a == b {
		return 0
	}
	x, y := parseDecimal(a), parseDecimal(b)
	if x.neg != y.neg {
		if x.neg {
			return -1
		}
		return 1
	}
	c := compareMagnitude(x, y)
	if x.neg {
		return -c
	}
	return c
}

func compareMagnitude(x, y decimal) int {
	switch {
	case x.digits == "" || y.digits == "":
		return sign(len(x.digits) - len(y.digits))
	case x.exp != y.exp:
		return sign(x.exp - y.exp)
	}
	return strings.Compare(x.digits, y.digits)
}

// AppendKey appends an encoding of v under which two jsonb values encode
// equally exactly when Compare finds them equal (numbers by value, object
// members in storage order), for hashing: GROUP BY, DISTINCT, joins.
func AppendKey(dst []byte, v Value) []byte {
	if v.Kind != Array && v.Kind != Object {
		dst = append(dst, 'r') // a raw top-level scalar is not [scalar]
	}
	return appendKey(dst, v)
}

func appendKey(dst []byte, v Value) []byte {
	dst = append(dst, byte('0'+typeRank(v.Kind)))
	switch v.Kind {
	case String:
		dst = binary.AppendUvarint(dst, uint64(len(v.Str)))
		dst = append(dst, v.Str...)
	case Number:
		d := parseDecimal(v.Str)
		if d.neg {
			dst = append(dst, '-')
		}
		dst = binary.AppendVarint(dst, int64(d.exp))
		dst = binary.AppendUvarint(dst, uint64(len(d.digits)))
		dst = append(dst, d.digits...)
	case Bool:
		dst = append(dst, byte(boolRank(v.Str)))
	case Array:
		dst = binary.AppendUvarint(dst, uint64(len(v.Items)))
		for _, it := range v.Items {
			dst = appendKey(dst, it)
		}
	case Object:
		idx := storageOrder(v)
		dst = binary.AppendUvarint(dst, uint64(len(idx)))
		for _, i := range idx {
			dst = binary.AppendUvarint(dst, uint64(len(v.Keys[i])))
			dst = append(dst, v.Keys[i]...)
			dst = appendKey(dst, v.Items[i])
		}
	}
	return dst
}
