package sqltypes

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/asofsql/asofsql/sqlerr"
)

// Kind is a SQL type without its modifiers.
type Kind uint8

const (
	// Unknown is the type of an untyped literal or parameter before
	// inference (Postgres "unknown", OID 705).
	Unknown Kind = iota
	Bool
	Int2
	Int4
	Int8
	Float4
	Float8
	Numeric
	Text
	Varchar
	Bytea
	Date
	Timestamp
	TimestampTZ
	Interval
	// JSON and JSONB are stored as text: JSON as the input text, JSONB in
	// its normal form (internal/pgjson), which is also its text output.
	JSON
	JSONB
	// Array is a one-dimensional array of Type.Elem (array.go).
	Array
	// Void is Postgres' pseudo-type void, the result of functions called
	// for their effect (pg_sleep). Its one value prints as the empty
	// string and it may be NULL (a strict function of NULL), so it is
	// stored as a Boolean whose validity is the value's (the bit itself
	// is always true and never read). No operator, aggregate but count,
	// ordering or table column takes it, as in Postgres.
	Void
)

// NoLimit marks an absent length, precision or scale modifier.
const NoLimit = -1

// MaxNumericPrecision is the largest NUMERIC precision decimal128 holds.
const MaxNumericPrecision = 38

// DefaultNumericScale is the scale of NUMERIC written without modifiers.
// Postgres' unconstrained numeric keeps each value's own scale; a fixed-scale
// decimal cannot, so asofsql stores it as numeric(38,16) (documented in
// docs/sql.md).
const DefaultNumericScale = 16

// Type is a SQL type with its modifiers. The zero value is Unknown.
type Type struct {
	Kind Kind
	// Precision: NUMERIC total digits, or fractional-second digits of
	// TIMESTAMP(TZ) (NoLimit = 6). Scale: NUMERIC fractional digits.
	// Length: VARCHAR(n) limit in characters (NoLimit = unbounded).
	Precision, Scale, Length int
	// Elem is the element kind of an Array (whose element modifiers are
	// Precision, Scale and Length); zero (Unknown) for other kinds.
	Elem Kind
}

// Convenience values for the unmodified types.
var (
	UnknownType     = Type{Kind: Unknown, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	BoolType        = Type{Kind: Bool, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	Int2Type        = Type{Kind: Int2, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	Int4Type        = Type{Kind: Int4, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	Int8Type        = Type{Kind: Int8, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	Float4Type      = Type{Kind: Float4, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	Float8Type      = Type{Kind: Float8, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	TextType        = Type{Kind: Text, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	VarcharType     = Type{Kind: Varchar, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	ByteaType       = Type{Kind: Bytea, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	DateType        = Type{Kind: Date, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	TimestampType   = Type{Kind: Timestamp, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	TimestampTZType = Type{Kind: TimestampTZ, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	IntervalType    = Type{Kind: Interval, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	JSONType        = Type{Kind: JSON, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	JSONBType       = Type{Kind: JSONB, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
	VoidType        = Type{Kind: Void, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
)

// Base is the unmodified type of kind k: NUMERIC without precision,
// VARCHAR without length, TIMESTAMP without precision.
func Base(k Kind) Type {
	return Type{Kind: k, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
}

// NumericType returns NUMERIC(p,s); p == NoLimit means unconstrained.
func NumericType(p, s int) Type {
	return Type{Kind: Numeric, Precision: p, Scale: s, Length: NoLimit}
}

// NumericDisplay returns the unconstrained NUMERIC whose values print with
// d fractional digits (capped at DefaultNumericScale, the stored scale; d
// < 0 means "unknown": trailing zeros are trimmed). It is stored exactly
// like NUMERIC, has no type modifier and is spelled "numeric": the display
// scale is plan-time knowledge about an expression (a literal's digits,
// a sum's or a quotient's result scale), standing in for the per-value
// dscale Postgres keeps. Table columns never carry one.
func NumericDisplay(d int) Type {
	if d < 0 {
		return NumericType(NoLimit, NoLimit)
	}
	return NumericType(NoLimit, min(d, DefaultNumericScale))
}

// DisplayScale is the number of fractional digits values of t print with:
// the scale of NUMERIC(p,s), the display scale of an unconstrained NUMERIC
// expression (NumericDisplay); ok is false for an unconstrained NUMERIC of
// unknown scale and for other kinds but the integers (scale 0).
func (t Type) DisplayScale() (int, bool) {
	switch {
	case t.IsInteger():
		return 0, true
	case t.Kind != Numeric:
		return 0, false
	case t.Precision != NoLimit:
		if t.Scale == NoLimit {
			return 0, true
		}
		return t.Scale, true
	case t.Scale != NoLimit:
		return t.Scale, true
	}
	return 0, false
}

// displayArg is the display scale appendNumeric takes: -1 to trim.
func (t Type) displayArg() int {
	if d, ok := t.DisplayScale(); ok {
		return d
	}
	return -1
}

// VarcharOf returns VARCHAR(n).
func VarcharOf(n int) Type {
	return Type{Kind: Varchar, Precision: NoLimit, Scale: NoLimit, Length: n}
}

// IsInteger reports whether t is SMALLINT, INTEGER or BIGINT.
func (t Type) IsInteger() bool { return t.Kind == Int2 || t.Kind == Int4 || t.Kind == Int8 }

// IsNumeric reports whether t is an integer, float or NUMERIC type.
func (t Type) IsNumeric() bool {
	return t.IsInteger() || t.Kind == Float4 || t.Kind == Float8 || t.Kind == Numeric
}

// IsString reports whether t is TEXT or VARCHAR.
func (t Type) IsString() bool { return t.Kind == Text || t.Kind == Varchar }

// IsTemporal reports whether t is DATE, TIMESTAMP or TIMESTAMPTZ.
func (t Type) IsTemporal() bool {
	return t.Kind == Date || t.Kind == Timestamp || t.Kind == TimestampTZ
}

// numericPS resolves an unconstrained NUMERIC to its stored precision/scale.
func (t Type) numericPS() (int32, int32) {
	if t.Precision == NoLimit {
		return MaxNumericPrecision, DefaultNumericScale
	}
	s := t.Scale
	if s == NoLimit {
		s = 0
	}
	return int32(t.Precision), int32(s)
}

// Arrow returns the Arrow type that stores values of t.
func (t Type) Arrow() arrow.DataType {
	switch t.Kind {
	case Bool, Void:
		return arrow.FixedWidthTypes.Boolean
	case Int2:
		return arrow.PrimitiveTypes.Int16
	case Int4:
		return arrow.PrimitiveTypes.Int32
	case Int8:
		return arrow.PrimitiveTypes.Int64
	case Float4:
		return arrow.PrimitiveTypes.Float32
	case Float8:
		return arrow.PrimitiveTypes.Float64
	case Numeric:
		p, s := t.numericPS()
		return &arrow.Decimal128Type{Precision: p, Scale: s}
	case Text, Varchar, Unknown, JSON, JSONB:
		return arrow.BinaryTypes.String
	case Bytea:
		return arrow.BinaryTypes.Binary
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Timestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case TimestampTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case Interval:
		return arrow.FixedWidthTypes.MonthDayNanoInterval
	case Array:
		return arrow.ListOf(t.ElemType().Arrow())
	}
	panic(fmt.Sprintf("sqltypes: unhandled kind %d", t.Kind))
}

// MetadataKey is the Arrow field metadata key holding a column's SQL type.
const MetadataKey = "asofsql.type"

// DisplayScaleKey is the Arrow field metadata key holding the display
// scale of an unconstrained NUMERIC expression (NumericDisplay).
const DisplayScaleKey = "asofsql.dscale"

// Field returns an Arrow field of type t carrying t in its metadata.
func (t Type) Field(name string, nullable bool) arrow.Field {
	return arrow.Field{
		Name:     name,
		Type:     t.Arrow(),
		Nullable: nullable,
		Metadata: t.metadata(),
	}
}

// fieldMetadata holds each type's field metadata once: fields are made
// per statement and per batch (every single-row INSERT makes a dozen),
// and arrow.Metadata is immutable, so one copy serves them all. Types
// with modifiers are unbounded in number (varchar(n)), so the cache
// stops growing at maxFieldMetadata entries.
var (
	fieldMetadata  sync.Map // Type → arrow.Metadata
	fieldMetadataN atomic.Int64
)

const maxFieldMetadata = 1024

func (t Type) metadata() arrow.Metadata {
	if md, ok := fieldMetadata.Load(t); ok {
		return md.(arrow.Metadata)
	}
	keys, vals := []string{MetadataKey}, []string{t.String()}
	if t.Kind == Numeric && t.Precision == NoLimit && t.Scale != NoLimit {
		keys, vals = append(keys, DisplayScaleKey), append(vals, strconv.Itoa(t.Scale))
	}
	md := arrow.NewMetadata(keys, vals)
	if fieldMetadataN.Load() < maxFieldMetadata {
		if _, loaded := fieldMetadata.LoadOrStore(t, md); !loaded {
			fieldMetadataN.Add(1)
		}
	}
	return md
}

// FromField returns the SQL type of an Arrow field: the type recorded in its
// metadata if present, else the type inferred from its Arrow type.
func FromField(f arrow.Field) (Type, error) {
	if i := f.Metadata.FindKey(MetadataKey); i >= 0 {
		t, err := ParseTypeName(f.Metadata.Values()[i])
		if err == nil && t.Kind == Numeric && t.Precision == NoLimit {
			if j := f.Metadata.FindKey(DisplayScaleKey); j >= 0 {
				if d, err := strconv.Atoi(f.Metadata.Values()[j]); err == nil && d >= 0 {
					t = NumericDisplay(d)
				}
			}
		}
		return t, err
	}
	return FromArrow(f.Type)
}

// FromArrow infers the SQL type that stores values of an Arrow type. Types
// without a SQL equivalent are a 0A000 error naming the type.
func FromArrow(dt arrow.DataType) (Type, error) {
	switch d := dt.(type) {
	case *arrow.BooleanType:
		return BoolType, nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Uint8Type:
		return Int2Type, nil
	case *arrow.Int32Type, *arrow.Uint16Type:
		return Int4Type, nil
	case *arrow.Int64Type, *arrow.Uint32Type:
		return Int8Type, nil
	case *arrow.Uint64Type:
		return NumericType(20, 0), nil
	case *arrow.Float16Type, *arrow.Float32Type:
		return Float4Type, nil
	case *arrow.Float64Type:
		return Float8Type, nil
	case *arrow.Decimal128Type:
		return NumericType(int(d.Precision), int(d.Scale)), nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return TextType, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType, *arrow.FixedSizeBinaryType:
		return ByteaType, nil
	case *arrow.Date32Type, *arrow.Date64Type:
		return DateType, nil
	case *arrow.TimestampType:
		if d.TimeZone != "" {
			return TimestampTZType, nil
		}
		return TimestampType, nil
	case *arrow.MonthDayNanoIntervalType, *arrow.DurationType:
		return IntervalType, nil
	case *arrow.DictionaryType:
		return FromArrow(d.ValueType)
	case *arrow.ListType:
		e, err := FromArrow(d.Elem())
		if err != nil || e.Kind == Array {
			return UnknownType, sqlerr.New(sqlerr.FeatureNotSupported, "Arrow type %s has no SQL equivalent", dt)
		}
		return ArrayOf(e), nil
	}
	return UnknownType, sqlerr.New(sqlerr.FeatureNotSupported, "Arrow type %s has no SQL equivalent", dt)
}

// OID is the PostgreSQL type OID of t.
func (t Type) OID() uint32 {
	switch t.Kind {
	case Bool:
		return 16
	case Int2:
		return 21
	case Int4:
		return 23
	case Int8:
		return 20
	case Float4:
		return 700
	case Float8:
		return 701
	case Numeric:
		return 1700
	case Text:
		return 25
	case Varchar:
		return 1043
	case Bytea:
		return 17
	case Date:
		return 1082
	case Timestamp:
		return 1114
	case TimestampTZ:
		return 1184
	case Interval:
		return 1186
	case JSON:
		return 114
	case JSONB:
		return 3802
	case Array:
		return arrayOIDs[t.Elem]
	case Void:
		return 2278
	}
	return 705
}

// FromOID returns the type for a PostgreSQL OID; ok is false for OIDs the
// engine does not support (including 0, "unspecified").
func FromOID(oid uint32) (Type, bool) {
	for k := Bool; k <= JSONB; k++ {
		t := Type{Kind: k, Precision: NoLimit, Scale: NoLimit, Length: NoLimit}
		if t.OID() == oid {
			return t, true
		}
	}
	if oid == 705 {
		return UnknownType, true
	}
	return arrayFromOID(oid)
}

// Typlen is pg_type.typlen: the fixed size in bytes, or -1 for varlena.
func (t Type) Typlen() int16 {
	switch t.Kind {
	case Bool:
		return 1
	case Int2:
		return 2
	case Int4, Float4, Date, Void:
		return 4
	case Int8, Float8, Timestamp, TimestampTZ:
		return 8
	case Interval:
		return 16
	case Unknown:
		return -2
	}
	return -1
}

// Typmod is the PostgreSQL type modifier (atttypmod), -1 when absent; an
// array's is its element's.
func (t Type) Typmod() int32 {
	if t.Kind == Array {
		return t.ElemType().Typmod()
	}
	switch t.Kind {
	case Numeric:
		if t.Precision == NoLimit {
			return -1
		}
		s := t.Scale
		if s == NoLimit {
			s = 0
		}
		return int32(t.Precision<<16|s) + 4
	case Varchar:
		if t.Length == NoLimit {
			return -1
		}
		return int32(t.Length) + 4
	case Timestamp, TimestampTZ:
		if t.Precision == NoLimit {
			return -1
		}
		return int32(t.Precision)
	}
	return -1
}

// String is the type as PostgreSQL's format_type prints it.
func (t Type) String() string {
	switch t.Kind {
	case Bool:
		return "boolean"
	case Int2:
		return "smallint"
	case Int4:
		return "integer"
	case Int8:
		return "bigint"
	case Float4:
		return "real"
	case Float8:
		return "double precision"
	case Numeric:
		if t.Precision == NoLimit {
			return "numeric"
		}
		s := t.Scale
		if s == NoLimit {
			s = 0
		}
		return fmt.Sprintf("numeric(%d,%d)", t.Precision, s)
	case Text:
		return "text"
	case Varchar:
		if t.Length == NoLimit {
			return "character varying"
		}
		return fmt.Sprintf("character varying(%d)", t.Length)
	case Bytea:
		return "bytea"
	case Date:
		return "date"
	case Timestamp:
		if t.Precision != NoLimit {
			return fmt.Sprintf("timestamp(%d) without time zone", t.Precision)
		}
		return "timestamp without time zone"
	case TimestampTZ:
		if t.Precision != NoLimit {
			return fmt.Sprintf("timestamp(%d) with time zone", t.Precision)
		}
		return "timestamp with time zone"
	case Interval:
		return "interval"
	case JSON:
		return "json"
	case JSONB:
		return "jsonb"
	case Array:
		return t.ElemType().String() + "[]"
	case Void:
		return "void"
	}
	return "unknown"
}

// ParseTypeName parses a Postgres type name as written in DDL or a cast:
// "int8", "double precision", "numeric(10,2)", "varchar(20)",
// "timestamp(3) with time zone", "timestamptz", ... Case and inner spacing
// do not matter. An unknown name is 42704 naming it.
func ParseTypeName(name string) (Type, error) {
	s := strings.Join(strings.Fields(strings.ToLower(name)), " ")
	s = strings.TrimPrefix(s, "pg_catalog.")
	if e, ok := strings.CutSuffix(s, "[]"); ok {
		et, err := ParseTypeName(e)
		if err != nil {
			return UnknownType, err
		}
		if et.Kind == Array || et.Kind == Unknown {
			return UnknownType, sqlerr.New(sqlerr.FeatureNotSupported, "type %s is not supported", strings.TrimSpace(name))
		}
		return ArrayOf(et), nil
	}
	base, mods, err := splitMods(s)
	if err != nil {
		return UnknownType, sqlerr.New(sqlerr.SyntaxError, "invalid type name %q", name)
	}
	// Suffixes after the modifier list: "timestamp(3) with time zone".
	suffix := ""
	if i := strings.Index(s, ")"); i >= 0 && i+1 < len(s) {
		suffix = strings.TrimSpace(s[i+1:])
	}
	if suffix != "" {
		base = base + " " + suffix
	}
	noMods := func(t Type) (Type, error) {
		if len(mods) > 0 {
			return UnknownType, sqlerr.New(sqlerr.SyntaxError, "type modifier is not allowed for type %q", t.String())
		}
		return t, nil
	}
	switch base {
	case "bool", "boolean":
		return noMods(BoolType)
	case "json":
		return noMods(JSONType)
	case "jsonb":
		return noMods(JSONBType)
	case "void":
		return noMods(VoidType)
	case "int2", "smallint":
		return noMods(Int2Type)
	case "int", "int4", "integer":
		return noMods(Int4Type)
	case "int8", "bigint":
		return noMods(Int8Type)
	case "float4", "real":
		return noMods(Float4Type)
	case "float8", "double precision", "double":
		return noMods(Float8Type)
	case "float":
		if len(mods) == 0 {
			return Float8Type, nil
		}
		if len(mods) != 1 || mods[0] < 1 || mods[0] > 53 {
			return UnknownType, sqlerr.New(sqlerr.InvalidParameterValue, "precision for type float must be between 1 and 53 bits")
		}
		if mods[0] <= 24 {
			return Float4Type, nil
		}
		return Float8Type, nil
	case "numeric", "decimal":
		switch len(mods) {
		case 0:
			return NumericType(NoLimit, NoLimit), nil
		case 1, 2:
			p, sc := mods[0], 0
			if len(mods) == 2 {
				sc = mods[1]
			}
			if p < 1 || p > MaxNumericPrecision {
				return UnknownType, sqlerr.New(sqlerr.InvalidParameterValue, "NUMERIC precision %d must be between 1 and %d", p, MaxNumericPrecision)
			}
			if sc < 0 || sc > p {
				return UnknownType, sqlerr.New(sqlerr.InvalidParameterValue, "NUMERIC scale %d must be between 0 and precision %d", sc, p)
			}
			return NumericType(p, sc), nil
		}
		return UnknownType, sqlerr.New(sqlerr.SyntaxError, "invalid NUMERIC type modifier")
	case "text":
		return noMods(TextType)
	case "varchar", "character varying":
		switch len(mods) {
		case 0:
			return VarcharType, nil
		case 1:
			if mods[0] < 1 {
				return UnknownType, sqlerr.New(sqlerr.InvalidParameterValue, "length for type varchar must be at least 1")
			}
			return VarcharOf(mods[0]), nil
		}
		return UnknownType, sqlerr.New(sqlerr.SyntaxError, "invalid type modifier for varchar")
	case "bytea":
		return noMods(ByteaType)
	case "date":
		return noMods(DateType)
	case "timestamp", "timestamp without time zone", "timestamptz", "timestamp with time zone":
		t := TimestampType
		if base == "timestamptz" || base == "timestamp with time zone" {
			t = TimestampTZType
		}
		switch len(mods) {
		case 0:
			return t, nil
		case 1:
			if mods[0] < 0 || mods[0] > 6 {
				return UnknownType, sqlerr.New(sqlerr.InvalidParameterValue, "TIMESTAMP(%d) precision must be between 0 and 6", mods[0])
			}
			t.Precision = mods[0]
			return t, nil
		}
		return UnknownType, sqlerr.New(sqlerr.SyntaxError, "invalid type modifier for timestamp")
	case "interval":
		return noMods(IntervalType)
	case "unknown":
		return noMods(UnknownType)
	}
	return UnknownType, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", strings.TrimSpace(name))
}

// splitMods splits "name(a,b) suffix" into "name" and [a b].
func splitMods(s string) (string, []int, error) {
	open := strings.Index(s, "(")
	if open < 0 {
		return s, nil, nil
	}
	end := strings.Index(s, ")")
	if end < open {
		return "", nil, fmt.Errorf("unbalanced")
	}
	var mods []int
	for _, part := range strings.Split(s[open+1:end], ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return "", nil, err
		}
		mods = append(mods, n)
	}
	return strings.TrimSpace(s[:open]), mods, nil
}
