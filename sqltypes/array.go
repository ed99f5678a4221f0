package sqltypes

import (
	"encoding/binary"
	"reflect"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
)

// One-dimensional arrays. An array type is Type{Kind: Array, Elem: k}
// with the element's modifiers in Precision, Scale and Length, so that a
// Type stays a comparable value; it is stored as an Arrow list of the
// element's Arrow type. Postgres' arrays may have any lower bound and
// several dimensions; asofsql's have lower bound 1 and one dimension
// (text input of another form is 0A000).

// ArrayOf is the one-dimensional array type of elements of type e.
func ArrayOf(e Type) Type {
	return Type{Kind: Array, Elem: e.Kind, Precision: e.Precision, Scale: e.Scale, Length: e.Length}
}

// IsArray reports whether t is an array type.
func (t Type) IsArray() bool { return t.Kind == Array }

// ElemType is the element type of an array type t.
func (t Type) ElemType() Type {
	return Type{Kind: t.Elem, Precision: t.Precision, Scale: t.Scale, Length: t.Length}
}

// arrayElems maps an array's element kind to the OID of the array type.
var arrayOIDs = map[Kind]uint32{
	Bool: 1000, Int2: 1005, Int4: 1007, Int8: 1016, Float4: 1021, Float8: 1022,
	Numeric: 1231, Text: 1009, Varchar: 1015, Bytea: 1001, Date: 1182,
	Timestamp: 1115, TimestampTZ: 1185, Interval: 1187,
}

func arrayFromOID(oid uint32) (Type, bool) {
	for k, o := range arrayOIDs {
		if o == oid {
			return ArrayOf(Base(k)), true
		}
	}
	return UnknownType, false
}

// arrayNeedsQuote reports whether an element's text must be quoted in an
// array's text output, as Postgres' array_out decides.
func arrayNeedsQuote(s string) bool {
	if s == "" || strings.EqualFold(s, "NULL") {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\\', '{', '}', ',', ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
	}
	return false
}

// encodeArrayText appends Postgres' text form of the list a[i]: {1,2,NULL},
// {"a b","c\"d"}.
func encodeArrayText(dst []byte, a arrow.Array, i int, t Type, o *Options) []byte {
	l := a.(*array.List)
	start, end := l.ValueOffsets(i)
	vals, et := l.ListValues(), t.ElemType()
	dst = append(dst, '{')
	var scratch []byte
	for j := start; j < end; j++ {
		if j > start {
			dst = append(dst, ',')
		}
		if vals.IsNull(int(j)) {
			dst = append(dst, "NULL"...)
			continue
		}
		scratch = EncodeText(scratch[:0], vals, int(j), et, o)
		if !arrayNeedsQuote(string(scratch)) {
			dst = append(dst, scratch...)
			continue
		}
		dst = append(dst, '"')
		for _, c := range scratch {
			if c == '"' || c == '\\' {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		}
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

// ParseArrayText splits Postgres' array text form into its elements (nil
// for NULL), as array_in reads it: blanks around elements are ignored,
// quoted elements keep theirs, a backslash escapes the next character.
// A leading "[1:n]=" dimension decoration is accepted when it matches;
// other lower bounds and nested (multi-dimensional) arrays are 0A000, and
// malformed text is 22P02 `malformed array literal`.
func ParseArrayText(s string) ([]*string, error) {
	malformed := func(detail string) error {
		return sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s).WithDetail("%s", detail)
	}
	p := trimSpace(s)
	dims := -1
	if strings.HasPrefix(p, "[") {
		eq := strings.Index(p, "=")
		if eq < 0 {
			return nil, malformed(`Missing "=" after array dimensions.`)
		}
		var lo, hi int
		dec := strings.TrimSpace(p[:eq])
		if n, err := sscanDims(dec, &lo, &hi); err != nil || n != 2 {
			if strings.Count(dec, "[") > 1 {
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported")
			}
			return nil, malformed(`"[" must introduce explicitly-specified array dimensions.`)
		}
		if lo != 1 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "arrays with a lower bound other than 1 are not supported")
		}
		dims = hi - lo + 1
		p = trimSpace(p[eq+1:])
	}
	if !strings.HasPrefix(p, "{") {
		return nil, malformed(`Array value must start with "{" or dimension information.`)
	}
	depth := 0
	for _, c := range []byte(p) {
		if c == '{' {
			depth++
		} else if !isSpace(c) {
			break
		}
	}
	if depth > 6 {
		return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "number of array dimensions (%d) exceeds the maximum allowed (6)", depth)
	}
	var out []*string
	i := 1
	expectElem := true
	for {
		for i < len(p) && isSpace(p[i]) {
			i++
		}
		if i >= len(p) {
			return nil, malformed("Unexpected end of input.")
		}
		c := p[i]
		switch {
		case c == '{':
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported")
		case c == '}':
			if len(out) > 0 && expectElem {
				return nil, malformed(`Unexpected "}" character.`)
			}
			if rest := trimSpace(p[i+1:]); rest != "" {
				return nil, malformed("Junk after closing right brace.")
			}
			if dims >= 0 && dims != len(out) {
				return nil, malformed("Specified array dimensions do not match array contents.")
			}
			return out, nil
		case c == ',':
			if expectElem {
				return nil, malformed(`Unexpected "," character.`)
			}
			expectElem = true
			i++
			continue
		}
		if !expectElem {
			return nil, malformed(`Expected "," or "}" character.`)
		}
		var sb strings.Builder
		quotedAny := false
		lastNonBlank := 0 // length of sb up to the last unquoted non-blank or quoted char
	elem:
		for i < len(p) {
			c := p[i]
			switch {
			case c == '"':
				quotedAny = true
				i++
				for {
					if i >= len(p) {
						return nil, malformed("Unexpected end of input.")
					}
					if p[i] == '\\' && i+1 < len(p) {
						sb.WriteByte(p[i+1])
						i += 2
						continue
					}
					if p[i] == '"' {
						i++
						break
					}
					sb.WriteByte(p[i])
					i++
				}
				lastNonBlank = sb.Len()
			case c == '\\':
				if i+1 >= len(p) {
					return nil, malformed("Unexpected end of input.")
				}
				sb.WriteByte(p[i+1])
				i += 2
				lastNonBlank = sb.Len()
			case c == ',' || c == '}':
				break elem
			case c == '{':
				return nil, malformed(`Unexpected "{" character.`)
			case isSpace(c):
				sb.WriteByte(c)
				i++
			default:
				sb.WriteByte(c)
				i++
				lastNonBlank = sb.Len()
			}
		}
		v := sb.String()[:lastNonBlank]
		if !quotedAny && strings.EqualFold(v, "NULL") {
			out = append(out, nil)
		} else {
			out = append(out, &v)
		}
		expectElem = false
	}
}

// sscanDims reads "[lo:hi]" (or "[hi]", lower bound 1).
func sscanDims(s string, lo, hi *int) (int, error) {
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") || strings.Count(s, "[") != 1 {
		return 0, errBadDims
	}
	in := s[1 : len(s)-1]
	a, b, ok := strings.Cut(in, ":")
	if !ok {
		a, b = "1", in
	}
	x, err1 := parseInt(a, 32, "integer")
	y, err2 := parseInt(b, 32, "integer")
	if err1 != nil || err2 != nil {
		return 0, errBadDims
	}
	*lo, *hi = int(x), int(y)
	return 2, nil
}

var errBadDims = sqlerr.New(sqlerr.InvalidTextRepresentation, "bad array dimensions")

// decodeArrayText reads an array's text form into the list builder b; the
// elements are checked before anything is appended.
func decodeArrayText(b array.Builder, t Type, s string, o *Options) error {
	elems, err := ParseArrayText(s)
	if err != nil {
		return err
	}
	et := t.ElemType()
	if err := checkElems(et, len(elems), func(vb array.Builder, j int) error {
		if elems[j] == nil {
			vb.AppendNull()
			return nil
		}
		return DecodeText(vb, et, *elems[j], o)
	}); err != nil {
		return err
	}
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	vb := lb.ValueBuilder()
	for _, e := range elems {
		if e == nil {
			vb.AppendNull()
			continue
		}
		_ = DecodeText(vb, et, *e, o) // checked above
	}
	return nil
}

// checkElems runs add for each element into a scratch builder, so that a
// bad element leaves the caller's builder untouched.
func checkElems(et Type, n int, add func(vb array.Builder, j int) error) error {
	vb := array.NewBuilder(memory.DefaultAllocator, et.Arrow())
	defer vb.Release()
	for j := 0; j < n; j++ {
		if err := add(vb, j); err != nil {
			return err
		}
	}
	return nil
}

// encodeArrayBinary appends array_send's format: ndim, has-null flag,
// element OID, then (size, lower bound 1) and each element as length +
// bytes (-1 for NULL). An empty array has no dimensions.
func encodeArrayBinary(dst []byte, a arrow.Array, i int, t Type) ([]byte, error) {
	l := a.(*array.List)
	start, end := l.ValueOffsets(i)
	vals, et := l.ListValues(), t.ElemType()
	be := binary.BigEndian
	n := int(end - start)
	hasNull := uint32(0)
	for j := start; j < end; j++ {
		if vals.IsNull(int(j)) {
			hasNull = 1
			break
		}
	}
	ndim := uint32(1)
	if n == 0 {
		ndim = 0
	}
	dst = be.AppendUint32(dst, ndim)
	dst = be.AppendUint32(dst, hasNull)
	dst = be.AppendUint32(dst, et.OID())
	if n > 0 {
		dst = be.AppendUint32(dst, uint32(n))
		dst = be.AppendUint32(dst, 1)
	}
	for j := start; j < end; j++ {
		if vals.IsNull(int(j)) {
			dst = be.AppendUint32(dst, 0xFFFFFFFF)
			continue
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = EncodeBinary(dst, vals, int(j), et); err != nil {
			return dst, err
		}
		be.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}

// decodeArrayBinary reads array_recv's format. The element OID must be
// the element type's (Postgres: 42804 "wrong element type"); more than
// one dimension is 0A000.
func decodeArrayBinary(b array.Builder, t Type, data []byte) error {
	be := binary.BigEndian
	short := func() error { return sqlerr.New(sqlerr.ProtocolViolation, "insufficient data left in message") }
	if len(data) < 12 {
		return short()
	}
	ndim, oid := int32(be.Uint32(data)), be.Uint32(data[8:])
	et := t.ElemType()
	p := data[12:]
	switch {
	case ndim < 0 || ndim > 6:
		return sqlerr.New(codeInvalidBinaryRepresentation, "invalid number of dimensions: %d", ndim)
	case ndim > 1:
		return sqlerr.New(sqlerr.FeatureNotSupported, "multidimensional arrays are not supported")
	case oid != et.OID():
		return sqlerr.New(sqlerr.DatatypeMismatch, "binary data has array element type %d instead of expected %d", oid, et.OID())
	}
	n := 0
	if ndim == 1 {
		if len(p) < 8 {
			return short()
		}
		n = int(int32(be.Uint32(p)))
		if n < 0 || int(int32(be.Uint32(p[4:]))) != 1 && n > 0 {
			if n >= 0 {
				return sqlerr.New(sqlerr.FeatureNotSupported, "arrays with a lower bound other than 1 are not supported")
			}
			return sqlerr.New(codeInvalidBinaryRepresentation, "invalid array dimensions")
		}
		p = p[8:]
	}
	var elems [][]byte
	for j := 0; j < n; j++ {
		if len(p) < 4 {
			return short()
		}
		ln := int32(be.Uint32(p))
		p = p[4:]
		if ln == -1 {
			elems = append(elems, nil)
			continue
		}
		if ln < 0 || int(ln) > len(p) {
			return short()
		}
		elems = append(elems, p[:ln:ln])
		p = p[ln:]
	}
	if len(p) != 0 {
		return sqlerr.New(codeInvalidBinaryRepresentation, "incorrect binary data format in array element")
	}
	add := func(vb array.Builder, j int) error {
		if elems[j] == nil {
			vb.AppendNull()
			return nil
		}
		return DecodeBinary(vb, et, elems[j])
	}
	if err := checkElems(et, n, add); err != nil {
		return err
	}
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	vb := lb.ValueBuilder()
	for j := 0; j < n; j++ {
		_ = add(vb, j) // checked above
	}
	return nil
}

// goArray is GoValue of an array: []any of the elements' Go values.
func goArray(a arrow.Array, i int, t Type) any {
	l := a.(*array.List)
	start, end := l.ValueOffsets(i)
	vals, et := l.ListValues(), t.ElemType()
	out := make([]any, 0, end-start)
	for j := start; j < end; j++ {
		out = append(out, GoValue(vals, int(j), et))
	}
	return out
}

// appendGoArray appends a Go slice ([]any, []int64, []string, ...) as an
// array; elements convert as AppendGo converts values, nil being NULL.
func appendGoArray(b array.Builder, t Type, v any, o *Options) (bool, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.Type().Elem().Kind() == reflect.Uint8 {
		return false, nil
	}
	et := t.ElemType()
	if err := checkElems(et, rv.Len(), func(vb array.Builder, j int) error {
		return AppendGo(vb, et, rv.Index(j).Interface(), o)
	}); err != nil {
		return true, err
	}
	if rv.IsNil() {
		b.AppendNull()
		return true, nil
	}
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	for j := 0; j < rv.Len(); j++ {
		_ = AppendGo(lb.ValueBuilder(), et, rv.Index(j).Interface(), o)
	}
	return true, nil
}
