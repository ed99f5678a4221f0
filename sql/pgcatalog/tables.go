package pgcatalog

import (
	"strconv"
	"strings"

	"github.com/asofsql/asofsql/sqltypes"
)

// def is one virtual table.
type def struct {
	schema, name string
	oid          int64
	kind         string
	cols         []Column
	rows         func(s *Source) [][]any
}

// cols parses "name type, ..." with Postgres catalog type names.
func cols(spec string) []Column {
	var out []Column
	for _, item := range strings.Split(spec, ",") {
		f := strings.Fields(item)
		name, pg := f[0], f[1]
		var t sqltypes.Type
		switch pg {
		case "oid", "xid", "int8":
			t = sqltypes.Int8Type
		case "int2":
			t = sqltypes.Int2Type
		case "int4":
			t = sqltypes.Int4Type
		case "float4":
			t = sqltypes.Float4Type
		case "bool":
			t = sqltypes.BoolType
		case "name", "char", "text", "regproc", "pg_node_tree", "aclitem[]", "text[]", "oid[]", "char[]",
			"int2vector", "oidvector", "int2[]", "anyarray", "timestamptz":
			t = sqltypes.TextType
		default:
			panic("pgcatalog: unknown column type " + pg)
		}
		if pg == "timestamptz" {
			t = sqltypes.TimestampTZType
		}
		out = append(out, Column{Name: name, Type: t, PGType: pg})
	}
	return out
}

func none(*Source) [][]any { return nil }

// defs are the virtual tables, by OID (Postgres 15's).
var defs = []*def{
	{Catalog, "pg_tablespace", 1213, "r", cols(`oid oid, spcname name, spcowner oid, spcacl aclitem[], spcoptions text[]`),
		func(*Source) [][]any {
			return [][]any{{int64(TablespaceDef), "pg_default", int64(RoleOID), nil, nil}, {int64(1664), "pg_global", int64(RoleOID), nil, nil}}
		}},
	{Catalog, "pg_type", 1247, "r", cols(`oid oid, typname name, typnamespace oid, typowner oid, typlen int2, typbyval bool,
		typtype char, typcategory char, typispreferred bool, typisdefined bool, typdelim char, typrelid oid,
		typsubscript regproc, typelem oid, typarray oid, typinput regproc, typoutput regproc, typreceive regproc,
		typsend regproc, typmodin regproc, typmodout regproc, typanalyze regproc, typalign char, typstorage char,
		typnotnull bool, typbasetype oid, typtypmod int4, typndims int4, typcollation oid, typdefaultbin pg_node_tree,
		typdefault text, typacl aclitem[]`), typeRows},
	{Catalog, "pg_attribute", 1249, "r", cols(`attrelid oid, attname name, atttypid oid, attstattarget int4, attlen int2,
		attnum int2, attndims int4, attcacheoff int4, atttypmod int4, attbyval bool, attalign char, attstorage char,
		attcompression char, attnotnull bool, atthasdef bool, atthasmissing bool, attidentity char, attgenerated char,
		attisdropped bool, attislocal bool, attinhcount int4, attcollation oid, attacl aclitem[], attoptions text[],
		attfdwoptions text[], attmissingval anyarray`), attributeRows},
	{Catalog, "pg_class", 1259, "r", cols(`oid oid, relname name, relnamespace oid, reltype oid, reloftype oid,
		relowner oid, relam oid, relfilenode oid, reltablespace oid, relpages int4, reltuples float4,
		relallvisible int4, reltoastrelid oid, relhasindex bool, relisshared bool, relpersistence char,
		relkind char, relnatts int2, relchecks int2, relhasrules bool, relhastriggers bool, relhassubclass bool,
		relrowsecurity bool, relforcerowsecurity bool, relispopulated bool, relreplident char, relispartition bool,
		relrewrite oid, relfrozenxid xid, relminmxid xid, relacl aclitem[], reloptions text[], relpartbound pg_node_tree`), classRows},
	{Catalog, "pg_database", 1262, "r", cols(`oid oid, datname name, datdba oid, encoding int4, datlocprovider char,
		datistemplate bool, datallowconn bool, datconnlimit int4, datfrozenxid xid, datminmxid xid,
		dattablespace oid, datcollate text, datctype text, daticulocale text, datcollversion text, datacl aclitem[]`),
		func(s *Source) [][]any {
			return [][]any{{int64(DatabaseOID), s.Database, int64(RoleOID), int64(6), "c", false, true, int64(-1),
				int64(716), int64(1), int64(TablespaceDef), "C", "C", nil, nil, nil}}
		}},
	{Catalog, "pg_am", 2601, "r", cols(`oid oid, amname name, amhandler regproc, amtype char`),
		func(*Source) [][]any {
			return [][]any{{int64(AmHeap), "heap", "heap_tableam_handler", "t"}, {int64(AmBtree), "btree", "bthandler", "i"}}
		}},
	{Catalog, "pg_attrdef", 2604, "r", cols(`oid oid, adrelid oid, adnum int2, adbin pg_node_tree`), none},
	{Catalog, "pg_constraint", 2606, "r", cols(`oid oid, conname name, connamespace oid, contype char,
		condeferrable bool, condeferred bool, convalidated bool, conrelid oid, contypid oid, conindid oid,
		conparentid oid, confrelid oid, confupdtype char, confdeltype char, confmatchtype char, conislocal bool,
		coninhcount int4, connoinherit bool, conkey int2[], confkey int2[], conpfeqop oid[], conppeqop oid[],
		conffeqop oid[], confdelsetcols int2[], conexclop oid[], conbin pg_node_tree`), none},
	{Catalog, "pg_description", 2609, "r", cols(`objoid oid, classoid oid, objsubid int4, description text`), none},
	{Catalog, "pg_index", 2610, "r", cols(`indexrelid oid, indrelid oid, indnatts int2, indnkeyatts int2,
		indisunique bool, indnullsnotdistinct bool, indisprimary bool, indisexclusion bool, indimmediate bool,
		indisclustered bool, indisvalid bool, indcheckxmin bool, indisready bool, indislive bool,
		indisreplident bool, indkey int2vector, indcollation oidvector, indclass oidvector, indoption int2vector,
		indexprs pg_node_tree, indpred pg_node_tree`), none},
	{Catalog, "pg_inherits", 2611, "r", cols(`inhrelid oid, inhparent oid, inhseqno int4, inhdetachpending bool`), none},
	{Catalog, "pg_namespace", 2615, "r", cols(`oid oid, nspname name, nspowner oid, nspacl aclitem[]`),
		func(s *Source) [][]any {
			rows := [][]any{
				{int64(NamespaceCatalog), Catalog, int64(RoleOID), nil},
				{int64(NamespacePublic), "public", int64(RoleOID), nil},
				{int64(NamespaceInfo), Info, int64(RoleOID), nil},
			}
			if s.temp {
				rows = append(rows, []any{int64(NamespaceTemp), TempNamespace, int64(RoleOID), nil})
			}
			return rows
		}},
	{Catalog, "pg_rewrite", 2618, "r", cols(`oid oid, rulename name, ev_class oid, ev_type char, ev_enabled char,
		is_instead bool, ev_qual pg_node_tree, ev_action pg_node_tree`),
		func(s *Source) [][]any {
			// each view is its "_RETURN" rule, under the view's own OID
			// (pg_get_ruledef prints it)
			var rows [][]any
			for _, r := range s.rels {
				if r.ViewSQL != "" {
					rows = append(rows, []any{r.OID, "_RETURN", r.OID, "1", "O", true, "<>", ""})
				}
			}
			return rows
		}},
	{Catalog, "pg_policy", 3256, "r", cols(`oid oid, polname name, polrelid oid, polcmd char, polpermissive bool,
		polroles oid[], polqual pg_node_tree, polwithcheck pg_node_tree`), none},
	{Catalog, "pg_statistic_ext", 3381, "r", cols(`oid oid, stxrelid oid, stxname name, stxnamespace oid,
		stxowner oid, stxstattarget int4, stxkeys int2vector, stxkind char[], stxexprs pg_node_tree`), none},
	{Catalog, "pg_collation", 3456, "r", cols(`oid oid, collname name, collnamespace oid, collowner oid,
		collprovider char, collisdeterministic bool, collencoding int4, collcollate text, collctype text,
		colliculocale text, collversion text`),
		func(*Source) [][]any {
			return [][]any{
				{int64(CollationDefault), "default", int64(NamespaceCatalog), int64(RoleOID), "d", true, int64(-1), nil, nil, nil, nil},
				{int64(950), "C", int64(NamespaceCatalog), int64(RoleOID), "c", true, int64(-1), "C", "C", nil, nil},
				{int64(951), "POSIX", int64(NamespaceCatalog), int64(RoleOID), "c", true, int64(-1), "POSIX", "POSIX", nil, nil},
			}
		}},
	{Catalog, "pg_publication", 6104, "r", cols(`oid oid, pubname name, pubowner oid, puballtables bool,
		pubinsert bool, pubupdate bool, pubdelete bool, pubtruncate bool, pubviaroot bool`), none},
	{Catalog, "pg_publication_rel", 6106, "r", cols(`oid oid, prpubid oid, prrelid oid, prqual pg_node_tree, prattrs int2vector`), none},
	{Catalog, "pg_publication_namespace", 6237, "r", cols(`oid oid, pnpubid oid, pnnspid oid`), none},
	{Catalog, "pg_roles", 12000, "v", cols(`rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool,
		rolcreatedb bool, rolcanlogin bool, rolreplication bool, rolconnlimit int4, rolpassword text,
		rolvaliduntil timestamptz, rolbypassrls bool, rolconfig text[], oid oid`),
		func(s *Source) [][]any {
			return [][]any{{s.User, true, true, true, true, true, true, int64(-1), "********", nil, true, nil, int64(RoleOID)}}
		}},
	{Catalog, "pg_user", 12014, "v", cols(`usename name, usesysid oid, usecreatedb bool, usesuper bool,
		userepl bool, usebypassrls bool, passwd text, valuntil timestamptz, useconfig text[]`),
		func(s *Source) [][]any {
			return [][]any{{s.User, int64(RoleOID), true, true, true, true, "********", nil, nil}}
		}},
	{Info, "columns", 13295, "v", cols(`table_catalog name, table_schema name, table_name name, column_name name,
		ordinal_position int4, column_default text, is_nullable text, data_type text,
		character_maximum_length int4, character_octet_length int4, numeric_precision int4,
		numeric_precision_radix int4, numeric_scale int4, datetime_precision int4, interval_type text,
		interval_precision int4, character_set_catalog name, character_set_schema name, character_set_name name,
		collation_catalog name, collation_schema name, collation_name name, domain_catalog name,
		domain_schema name, domain_name name, udt_catalog name, udt_schema name, udt_name name,
		scope_catalog name, scope_schema name, scope_name name, maximum_cardinality int4, dtd_identifier name,
		is_self_referencing text, is_identity text, identity_generation text, identity_start text,
		identity_increment text, identity_maximum text, identity_minimum text, identity_cycle text,
		is_generated text, generation_expression text, is_updatable text`), infoColumnRows},
	{Info, "schemata", 13382, "v", cols(`catalog_name name, schema_name name, schema_owner name,
		default_character_set_catalog name, default_character_set_schema name, default_character_set_name name,
		sql_path text`),
		func(s *Source) [][]any {
			var out [][]any
			for _, n := range []string{"public", Catalog, Info} {
				out = append(out, []any{s.Database, n, s.User, nil, nil, nil, nil})
			}
			return out
		}},
	{Info, "tables", 13425, "v", cols(`table_catalog name, table_schema name, table_name name, table_type text,
		self_referencing_column_name name, reference_generation text, user_defined_type_catalog name,
		user_defined_type_schema name, user_defined_type_name name, is_insertable_into text, is_typed text,
		commit_action text`), infoTableRows},
}

func typeRows(*Source) [][]any {
	var out [][]any
	for _, t := range Types {
		out = append(out, []any{t.OID, t.Name, int64(NamespaceCatalog), int64(RoleOID), t.Len, t.ByVal,
			"b", t.Category, t.Preferred, true, ",", int64(0),
			"-", int64(0), t.Array, t.In, t.Out, t.Recv,
			t.Send, t.ModIn, t.ModOut, "-", t.Align, t.Storage,
			false, int64(0), int64(-1), int64(0), t.Collation, nil,
			nil, nil})
	}
	return out
}

func attributeRows(s *Source) [][]any {
	var out [][]any
	for _, r := range s.rels {
		for i, c := range r.Columns {
			ti := TypeOf(c.Type)
			coll := ti.Collation
			notNull := r.NotNull != nil && r.NotNull[i]
			out = append(out, []any{r.OID, c.Name, ti.OID, int64(-1), ti.Len,
				int64(i + 1), int64(0), int64(-1), int64(c.Type.Typmod()), ti.ByVal, ti.Align, ti.Storage,
				"", notNull, false, false, "", "",
				false, true, int64(0), coll, nil, nil,
				nil, nil})
		}
	}
	return out
}

func classRows(s *Source) [][]any {
	var out [][]any
	for _, r := range s.rels {
		am, reltuples := int64(AmHeap), float64(r.Rows)
		if r.Kind == "v" {
			am, reltuples = 0, -1
		}
		out = append(out, []any{r.OID, r.Name, r.Namespace, int64(0), int64(0),
			int64(RoleOID), am, r.OID, int64(0), int64(0), reltuples,
			int64(0), int64(0), false, r.OID == 1213 || r.OID == 1262, "p",
			r.Kind, int64(len(r.Columns)), int64(0), r.Kind == "v", false, false,
			false, false, true, "d", false,
			int64(0), int64(0), int64(0), nil, nil, nil})
	}
	return out
}

func infoTableRows(s *Source) [][]any {
	var out [][]any
	for _, r := range s.rels {
		typ, ins := "BASE TABLE", "YES"
		if r.Kind == "v" {
			typ, ins = "VIEW", "NO"
		}
		out = append(out, []any{s.Database, NamespaceName(r.Namespace), r.Name, typ,
			nil, nil, nil, nil, nil, ins, "NO", nil})
	}
	return out
}

func infoColumnRows(s *Source) [][]any {
	var out [][]any
	for _, r := range s.rels {
		for i, c := range r.Columns {
			t := c.Type
			nullable := "YES"
			if r.NotNull != nil && r.NotNull[i] {
				nullable = "NO"
			}
			var charMax, octet, prec, radix, scale, dtPrec, collName any
			switch t.Kind {
			case sqltypes.Text, sqltypes.Varchar:
				octet = int64(1073741824)
				if t.Length != sqltypes.NoLimit {
					charMax, octet = int64(t.Length), int64(4*t.Length)
				}
			case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8:
				prec, radix, scale = int64(8*t.Typlen()), int64(2), int64(0)
			case sqltypes.Float4:
				prec, radix = int64(24), int64(2)
			case sqltypes.Float8:
				prec, radix = int64(53), int64(2)
			case sqltypes.Numeric:
				radix = int64(10)
				if t.Precision != sqltypes.NoLimit {
					prec, scale = int64(t.Precision), int64(max(t.Scale, 0))
				}
			case sqltypes.Date:
				dtPrec = int64(0)
			case sqltypes.Timestamp, sqltypes.TimestampTZ, sqltypes.Interval:
				dtPrec = int64(6)
				if t.Precision != sqltypes.NoLimit {
					dtPrec = int64(t.Precision)
				}
			}
			ti := TypeOf(t)
			out = append(out, []any{s.Database, NamespaceName(r.Namespace), r.Name, c.Name,
				int64(i + 1), nil, nullable, dataType(t),
				charMax, octet, prec,
				radix, scale, dtPrec, nil,
				nil, nil, nil, nil,
				nil, nil, collName, nil,
				nil, nil, s.Database, Catalog, ti.Name,
				nil, nil, nil, nil, strconv.Itoa(i + 1),
				"NO", "NO", nil, nil,
				nil, nil, nil, "NO",
				"NEVER", nil, map[bool]string{true: "NO", false: "YES"}[r.Kind == "v"]})
		}
	}
	return out
}

// dataType is information_schema's data_type: the type without modifiers.
func dataType(t sqltypes.Type) string {
	switch t.Kind {
	case sqltypes.Numeric:
		return "numeric"
	case sqltypes.Varchar:
		return "character varying"
	case sqltypes.Timestamp:
		return "timestamp without time zone"
	case sqltypes.TimestampTZ:
		return "timestamp with time zone"
	}
	return t.String()
}
