package pgcatalog

import (
	"slices"
	"sort"
	"strings"

	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sqltypes"
)

// Well-known OIDs (Postgres 15's).
const (
	// FirstUserOID is Postgres' FirstNormalObjectId: user objects start here.
	FirstUserOID = 16384
	// DatabaseOID is the one database's OID (below every user table's).
	DatabaseOID = FirstUserOID
	// RoleOID is the connected user's role (the bootstrap superuser's OID).
	RoleOID          = 10
	NamespaceCatalog = 11
	NamespacePublic  = 2200
	NamespaceInfo    = 13207
	// NamespaceTemp is the session's temporary schema (pg_temp_N in
	// Postgres, whose OID is made when a backend first needs one): below
	// FirstUserOID, so that it never meets a relation's.
	NamespaceTemp    = 16383
	AmHeap           = 2
	AmBtree          = 403
	CollationDefault = 100
	TablespaceDef    = 1663
)

// Schema names.
const (
	Catalog = "pg_catalog"
	Info    = "information_schema"
)

// Column is one column of a virtual table.
type Column struct {
	Name string
	Type sqltypes.Type
	// PGType is the Postgres catalog type the column stands for ("oid",
	// "name", "aclitem[]", ...), for documentation and tests.
	PGType string
}

// Table is a virtual table materialized for one statement.
type Table struct {
	Schema, Name string
	OID          int64
	Columns      []Column
	// Rows hold expr.Literal values: int64 for integer types, float64 for
	// real, string for text, bool, nil for NULL.
	Rows [][]any
}

// Rel is one relation pg_class lists.
type Rel struct {
	OID       int64
	Name      string
	Namespace int64
	// Kind is pg_class.relkind: "r" table, "v" view.
	Kind    string
	Columns []Column
	// NotNull per column (user tables).
	NotNull []bool
	// Rows is the row count (user tables; 0 for virtual ones).
	Rows int64
	// Bytes is the stored size (catalog.TableInfo.Bytes; 0 for virtual
	// tables, which have no storage).
	Bytes int64
	// ViewSQL is a user view's query ("" otherwise).
	ViewSQL string
}

// Source is the database as the virtual tables show it to one statement.
type Source struct {
	Database, User string
	rels           []*Rel
	byOID          map[int64]*Rel
	temp           bool // the session has temporary tables
}

// NewSource describes a database named db, seen by user, holding tables.
func NewSource(db, user string, tables []*catalog.TableInfo) *Source {
	s := &Source{Database: db, User: user, byOID: map[int64]*Rel{}}
	for _, d := range defs {
		s.add(&Rel{OID: d.oid, Name: d.name, Namespace: nspOID(d.schema), Kind: d.kind, Columns: d.cols})
	}
	sorted := append([]*catalog.TableInfo(nil), tables...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	next := int64(FirstUserOID)
	for _, t := range sorted {
		if o := int64(FirstUserOID + t.ID); t.ID > 0 && o > next {
			next = o
		}
	}
	for _, t := range sorted {
		oid := int64(FirstUserOID + t.ID)
		if t.ID == 0 {
			next++
			oid = next
		}
		r := &Rel{OID: oid, Name: t.Name, Namespace: NamespacePublic, Kind: "r", Rows: t.Rows, Bytes: t.Bytes}
		for _, c := range t.Columns {
			r.Columns = append(r.Columns, Column{Name: c.Name, Type: c.Type})
			r.NotNull = append(r.NotNull, c.NotNull)
		}
		s.add(r)
	}
	sort.Slice(s.rels, func(i, j int) bool { return s.rels[i].OID < s.rels[j].OID })
	return s
}

// TempNamespace is the name pg_namespace gives the session's temporary
// schema: PostgreSQL's pg_temp_N, N the backend's slot, 3 for the first
// client backend of a server; every session sees only its own.
const TempNamespace = "pg_temp_3"

// AddTempTables adds the session's temporary tables in its temporary
// schema, with the OIDs of their catalog ids (temporary ids are far above
// permanent ones).
func (s *Source) AddTempTables(tables []*catalog.TableInfo) {
	next := int64(FirstUserOID)
	for _, r := range s.rels {
		next = max(next, r.OID)
	}
	sorted := slices.SortedFunc(slices.Values(tables), func(a, b *catalog.TableInfo) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range sorted {
		oid := int64(FirstUserOID + t.ID)
		if t.ID == 0 || oid <= next {
			next++
			oid = next
		}
		r := &Rel{OID: oid, Name: t.Name, Namespace: NamespaceTemp, Kind: "r", Rows: t.Rows, Bytes: t.Bytes}
		for _, c := range t.Columns {
			r.Columns = append(r.Columns, Column{Name: c.Name, Type: c.Type})
			r.NotNull = append(r.NotNull, c.NotNull)
		}
		s.add(r)
		s.temp = true
	}
	sort.Slice(s.rels, func(i, j int) bool { return s.rels[i].OID < s.rels[j].OID })
}

// View is a user view as pg_class and pg_attribute show it: its name and
// the columns its query gives.
type View struct {
	Name    string
	Columns []Column
	// SQL is the view's query as it was written (pg_get_viewdef).
	SQL string
}

// AddViews adds views in schema public, with OIDs after every other
// relation's (views have no catalog id; the OIDs follow name order).
func (s *Source) AddViews(views []View) {
	next := int64(FirstUserOID)
	for _, r := range s.rels {
		next = max(next, r.OID)
	}
	sorted := slices.SortedFunc(slices.Values(views), func(a, b View) int { return strings.Compare(a.Name, b.Name) })
	for _, v := range sorted {
		next++
		s.add(&Rel{OID: next, Name: v.Name, Namespace: NamespacePublic, Kind: "v", Columns: v.Columns, ViewSQL: v.SQL})
	}
}

func (s *Source) add(r *Rel) {
	s.rels = append(s.rels, r)
	s.byOID[r.OID] = r
}

// Rels lists every relation, by OID.
func (s *Source) Rels() []*Rel { return s.rels }

// Rel finds a relation by OID.
func (s *Source) Rel(oid int64) (*Rel, bool) {
	r, ok := s.byOID[oid]
	return r, ok
}

// Visible reports pg_table_is_visible: the relation's schema is on the
// search path (pg_catalog, then public) and no earlier schema there has a
// relation of the same name.
func (s *Source) Visible(r *Rel) bool {
	switch r.Namespace {
	case NamespaceCatalog:
		return true
	case NamespaceTemp:
		// pg_temp comes before the search path for relations
		return true
	case NamespacePublic:
		for _, o := range s.rels {
			if (o.Namespace == NamespaceCatalog || o.Namespace == NamespaceTemp) && o.Name == r.Name {
				return false
			}
		}
		return true
	}
	return false
}

// QualifiedName is the relation's name as regclass prints it: qualified
// with its schema unless visible, each part quoted when needed.
func (s *Source) QualifiedName(r *Rel) string {
	if s.Visible(r) {
		return QuoteIdent(r.Name)
	}
	return QuoteIdent(NamespaceName(r.Namespace)) + "." + QuoteIdent(r.Name)
}

// Table materializes schema.name; schema "" searches pg_catalog only
// (user tables are the planner's business). ok is false when there is no
// such virtual table.
func (s *Source) Table(schema, name string) (*Table, bool) {
	if schema == "" {
		schema = Catalog
	}
	for _, d := range defs {
		if d.schema == schema && d.name == name {
			return &Table{Schema: d.schema, Name: d.name, OID: d.oid, Columns: d.cols, Rows: d.rows(s)}, true
		}
	}
	return nil, false
}

// IsVirtualSchema reports whether schema is one this package serves.
func IsVirtualSchema(schema string) bool { return schema == Catalog || schema == Info }

// Has reports whether schema.name (schema "" meaning pg_catalog) is a
// virtual table.
func Has(schema, name string) bool {
	if schema == "" {
		schema = Catalog
	}
	for _, d := range defs {
		if d.schema == schema && d.name == name {
			return true
		}
	}
	return false
}

// NamespaceName is the schema name of a namespace OID ("" if none).
func NamespaceName(oid int64) string {
	switch oid {
	case NamespaceCatalog:
		return Catalog
	case NamespacePublic:
		return "public"
	case NamespaceInfo:
		return Info
	case NamespaceTemp:
		return TempNamespace
	}
	return ""
}

func nspOID(name string) int64 {
	switch name {
	case Catalog:
		return NamespaceCatalog
	case Info:
		return NamespaceInfo
	}
	return NamespacePublic
}

// QuoteIdent quotes an identifier as Postgres' quote_ident does: only when
// it is not a lower-case plain word.
func QuoteIdent(s string) string {
	plain := s != ""
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			plain = false
			break
		}
	}
	if plain && !reserved[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// reserved are Postgres' reserved key words (quote_ident quotes them).
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast
		check collate column constraint create current_catalog current_date current_role current_time
		current_timestamp current_user default deferrable desc distinct do else end except false fetch
		for foreign from grant group having in initially intersect into lateral leading limit localtime
		localtimestamp not null offset on only or order placing primary references returning select
		session_user some symmetric table then to trailing true union unique user using variadic when
		where window with authorization binary collation concurrently cross current_schema freeze full
		ilike inner is isnull join left like natural notnull outer overlaps right similar tablesample verbose`) {
		reserved[w] = true
	}
}

// TypeInfo is what pg_type says about one type.
type TypeInfo struct {
	OID                      int64
	Name                     string
	Len                      int64
	ByVal                    bool
	Category, Align, Storage string
	Preferred                bool
	Collation                int64
	Array                    int64
	In, Out, Recv, Send      string
	ModIn, ModOut            string
	Type                     sqltypes.Type
}

// Types are the types asofsql supports, by OID.
var Types = []TypeInfo{
	{16, "bool", 1, true, "B", "c", "p", true, 0, 1000, "boolin", "boolout", "boolrecv", "boolsend", "-", "-", sqltypes.BoolType},
	{17, "bytea", -1, false, "U", "i", "x", false, 0, 1001, "byteain", "byteaout", "bytearecv", "byteasend", "-", "-", sqltypes.ByteaType},
	{20, "int8", 8, true, "N", "d", "p", false, 0, 1016, "int8in", "int8out", "int8recv", "int8send", "-", "-", sqltypes.Int8Type},
	{21, "int2", 2, true, "N", "s", "p", false, 0, 1005, "int2in", "int2out", "int2recv", "int2send", "-", "-", sqltypes.Int2Type},
	{23, "int4", 4, true, "N", "i", "p", false, 0, 1007, "int4in", "int4out", "int4recv", "int4send", "-", "-", sqltypes.Int4Type},
	{114, "json", -1, false, "U", "i", "x", false, 0, 199, "json_in", "json_out", "json_recv", "json_send", "-", "-", sqltypes.JSONType},
	{25, "text", -1, false, "S", "i", "x", true, 100, 1009, "textin", "textout", "textrecv", "textsend", "-", "-", sqltypes.TextType},
	{700, "float4", 4, true, "N", "i", "p", false, 0, 1021, "float4in", "float4out", "float4recv", "float4send", "-", "-", sqltypes.Float4Type},
	{701, "float8", 8, true, "N", "d", "p", true, 0, 1022, "float8in", "float8out", "float8recv", "float8send", "-", "-", sqltypes.Float8Type},
	{1043, "varchar", -1, false, "S", "i", "x", false, 100, 1015, "varcharin", "varcharout", "varcharrecv", "varcharsend", "varchartypmodin", "varchartypmodout", sqltypes.VarcharType},
	{1082, "date", 4, true, "D", "i", "p", false, 0, 1182, "date_in", "date_out", "date_recv", "date_send", "-", "-", sqltypes.DateType},
	{1114, "timestamp", 8, true, "D", "d", "p", false, 0, 1115, "timestamp_in", "timestamp_out", "timestamp_recv", "timestamp_send", "timestamptypmodin", "timestamptypmodout", sqltypes.TimestampType},
	{1184, "timestamptz", 8, true, "D", "d", "p", true, 0, 1185, "timestamptz_in", "timestamptz_out", "timestamptz_recv", "timestamptz_send", "timestamptztypmodin", "timestamptztypmodout", sqltypes.TimestampTZType},
	{1186, "interval", 16, false, "T", "d", "p", true, 0, 1187, "interval_in", "interval_out", "interval_recv", "interval_send", "intervaltypmodin", "intervaltypmodout", sqltypes.IntervalType},
	{3802, "jsonb", -1, false, "U", "i", "x", false, 0, 3807, "jsonb_in", "jsonb_out", "jsonb_recv", "jsonb_send", "-", "-", sqltypes.JSONBType},
	{1700, "numeric", -1, false, "N", "i", "m", false, 0, 1231, "numeric_in", "numeric_out", "numeric_recv", "numeric_send", "numerictypmodin", "numerictypmodout", sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit)},
}

// TypeOf returns the pg_type entry of t's kind.
func TypeOf(t sqltypes.Type) *TypeInfo {
	oid := int64(t.OID())
	for i := range Types {
		if Types[i].OID == oid {
			return &Types[i]
		}
	}
	return nil
}
