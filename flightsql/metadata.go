package flightsql

import (
	"context"
	"runtime/debug"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"

	"github.com/asofsql/asofsql/pgwire"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
)

// Metadata for generic clients and BI tools. The database is one catalog
// (Config.Database) with one schema, public, holding the tables (type
// TABLE). The virtual pg_catalog tables answer SQL but are not listed.

const (
	publicSchema = "public"
	tableType    = "TABLE"
)

// metaInfo is the FlightInfo of a metadata command: its ticket is the
// command itself, answered by the matching DoGet method.
func (h *handler) metaInfo(desc *flight.FlightDescriptor, schema *arrow.Schema) *flight.FlightInfo {
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, h.mem),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: desc.Cmd}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}
}

// oneBatch streams one batch built by fill.
func (h *handler) oneBatch(schema *arrow.Schema, fill func(*array.RecordBuilder) error) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(h.mem, schema)
	defer b.Release()
	if err := fill(b); err != nil {
		return nil, nil, err
	}
	rec := b.NewRecordBatch()
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: rec}
	close(ch)
	return schema, ch, nil
}

func (h *handler) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return h.metaInfo(desc, schema_ref.Catalogs), nil
}

func (h *handler) DoGetCatalogs(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return h.oneBatch(schema_ref.Catalogs, func(b *array.RecordBuilder) error {
		b.Field(0).(*array.StringBuilder).Append(h.cfg.Database)
		return nil
	})
}

func (h *handler) GetFlightInfoSchemas(_ context.Context, _ afsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return h.metaInfo(desc, schema_ref.DBSchemas), nil
}

func (h *handler) DoGetDBSchemas(_ context.Context, cmd afsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return h.oneBatch(schema_ref.DBSchemas, func(b *array.RecordBuilder) error {
		if h.catalogMatches(cmd.GetCatalog()) && like(cmd.GetDBSchemaFilterPattern(), publicSchema) {
			b.Field(0).(*array.StringBuilder).Append(h.cfg.Database)
			b.Field(1).(*array.StringBuilder).Append(publicSchema)
		}
		return nil
	})
}

// catalogMatches applies a catalog filter: nil matches all, "" only
// objects without a catalog (none here).
func (h *handler) catalogMatches(c *string) bool { return c == nil || *c == h.cfg.Database }

func (h *handler) GetFlightInfoTables(_ context.Context, cmd afsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if cmd.GetIncludeSchema() {
		return h.metaInfo(desc, schema_ref.TablesWithIncludedSchema), nil
	}
	return h.metaInfo(desc, schema_ref.Tables), nil
}

func (h *handler) DoGetTables(_ context.Context, cmd afsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	typeOK := len(cmd.GetTableTypes()) == 0
	for _, t := range cmd.GetTableTypes() {
		typeOK = typeOK || strings.EqualFold(t, tableType)
	}
	return h.oneBatch(schema, func(b *array.RecordBuilder) error {
		if !typeOK || !h.catalogMatches(cmd.GetCatalog()) || !like(cmd.GetDBSchemaFilterPattern(), publicSchema) {
			return nil
		}
		for _, name := range h.db.Tables() {
			if !like(cmd.GetTableNameFilterPattern(), name) {
				continue
			}
			info, err := h.db.Table(name)
			if sqlerr.Code(err) == sqlerr.UndefinedTable {
				continue // dropped since the listing
			}
			if err != nil {
				return err
			}
			b.Field(0).(*array.StringBuilder).Append(h.cfg.Database)
			b.Field(1).(*array.StringBuilder).Append(publicSchema)
			b.Field(2).(*array.StringBuilder).Append(name)
			b.Field(3).(*array.StringBuilder).Append(tableType)
			if cmd.GetIncludeSchema() {
				fields := make([]arrow.Field, len(info.Columns))
				for i, c := range info.Columns {
					f := info.Schema.Field(i)
					md := withColumnMetadata(f.Metadata, c.Type)
					md = arrow.NewMetadata(append(md.Keys(), afsql.CatalogNameKey, afsql.SchemaNameKey, afsql.TableNameKey),
						append(md.Values(), h.cfg.Database, publicSchema, name))
					f.Metadata = md
					fields[i] = f
				}
				b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(arrow.NewSchema(fields, nil), h.mem))
			}
		}
		return nil
	})
}

func (h *handler) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return h.metaInfo(desc, schema_ref.TableTypes), nil
}

func (h *handler) DoGetTableTypes(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return h.oneBatch(schema_ref.TableTypes, func(b *array.RecordBuilder) error {
		b.Field(0).(*array.StringBuilder).Append(tableType)
		return nil
	})
}

// The engine has no primary or foreign keys: the key commands answer
// with no rows, which is what generic clients expect of such a database.

func (h *handler) GetFlightInfoPrimaryKeys(_ context.Context, _ afsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return h.metaInfo(desc, schema_ref.PrimaryKeys), nil
}

func (h *handler) DoGetPrimaryKeys(context.Context, afsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return h.oneBatch(schema_ref.PrimaryKeys, func(*array.RecordBuilder) error { return nil })
}

func (h *handler) GetFlightInfoExportedKeys(_ context.Context, _ afsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return h.metaInfo(desc, schema_ref.ExportedKeys), nil
}

func (h *handler) DoGetExportedKeys(context.Context, afsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return h.oneBatch(schema_ref.ExportedKeys, func(*array.RecordBuilder) error { return nil })
}

func (h *handler) GetFlightInfoImportedKeys(_ context.Context, _ afsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return h.metaInfo(desc, schema_ref.ImportedKeys), nil
}

func (h *handler) DoGetImportedKeys(context.Context, afsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return h.oneBatch(schema_ref.ImportedKeys, func(*array.RecordBuilder) error { return nil })
}

func (h *handler) GetFlightInfoCrossReference(_ context.Context, _ afsql.CrossTableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return h.metaInfo(desc, schema_ref.CrossReference), nil
}

func (h *handler) DoGetCrossReference(context.Context, afsql.CrossTableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return h.oneBatch(schema_ref.CrossReference, func(*array.RecordBuilder) error { return nil })
}

// xdbcType is one row of GetXdbcTypeInfo.
type xdbcType struct {
	t            sqltypes.Type
	name         string
	dataType     int32 // XdbcDataType
	size         int32 // -1: none
	quoted       bool  // literals are written '...'
	createParams []string
	caseSens     bool
	unsigned     bool
	fixedScale   bool
	minScale     int32
	maxScale     int32
	sqlDataType  int32
	subcode      int32 // -1: none
	radix        int32 // -1: none
}

// xdbcTypes are the engine's types, ordered by data type as ODBC's
// SQLGetTypeInfo requires.
var xdbcTypes = []xdbcType{
	{t: sqltypes.BoolType, dataType: -7, size: 1, subcode: -1, radix: -1, sqlDataType: -7},
	{t: sqltypes.Int8Type, dataType: -5, size: 19, subcode: -1, radix: 10, sqlDataType: -5},
	{t: sqltypes.ByteaType, dataType: -3, size: -1, quoted: true, subcode: -1, radix: -1, sqlDataType: -3},
	{t: sqltypes.TextType, dataType: -1, size: -1, quoted: true, caseSens: true, subcode: -1, radix: -1, sqlDataType: -1},
	{t: sqltypes.NumericType(sqltypes.NoLimit, sqltypes.NoLimit), name: "numeric", dataType: 2, size: sqltypes.MaxNumericPrecision,
		createParams: []string{"precision", "scale"}, maxScale: sqltypes.MaxNumericPrecision, subcode: -1, radix: 10, sqlDataType: 2},
	{t: sqltypes.Int4Type, dataType: 4, size: 10, subcode: -1, radix: 10, sqlDataType: 4},
	{t: sqltypes.Int2Type, dataType: 5, size: 5, subcode: -1, radix: 10, sqlDataType: 5},
	{t: sqltypes.Float4Type, dataType: 7, size: 24, subcode: -1, radix: 2, sqlDataType: 7},
	{t: sqltypes.Float8Type, dataType: 8, size: 53, subcode: -1, radix: 2, sqlDataType: 8},
	{t: sqltypes.IntervalType, dataType: 10, size: 49, quoted: true, subcode: 110, radix: -1, sqlDataType: 10, maxScale: 6},
	{t: sqltypes.VarcharType, name: "character varying", dataType: 12, size: 10485760, quoted: true, caseSens: true,
		createParams: []string{"length"}, subcode: -1, radix: -1, sqlDataType: 12},
	{t: sqltypes.DateType, dataType: 91, size: 10, quoted: true, subcode: 1, radix: -1, sqlDataType: 9},
	{t: sqltypes.TimestampType, dataType: 93, size: 26, quoted: true, createParams: []string{"precision"}, maxScale: 6,
		subcode: 3, radix: -1, sqlDataType: 9},
	{t: sqltypes.TimestampTZType, dataType: 93, size: 35, quoted: true, createParams: []string{"precision"}, maxScale: 6,
		subcode: 5, radix: -1, sqlDataType: 9},
}

func (h *handler) GetFlightInfoXdbcTypeInfo(_ context.Context, _ afsql.GetXdbcTypeInfo, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return h.metaInfo(desc, schema_ref.XdbcTypeInfo), nil
}

func (h *handler) DoGetXdbcTypeInfo(_ context.Context, cmd afsql.GetXdbcTypeInfo) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return h.oneBatch(schema_ref.XdbcTypeInfo, func(b *array.RecordBuilder) error {
		for _, x := range xdbcTypes {
			if f := cmd.GetDataType(); f != nil && *f != x.dataType {
				continue
			}
			name := x.name
			if name == "" {
				name = x.t.String()
			}
			str := func(i int, v string, ok bool) {
				if ok {
					b.Field(i).(*array.StringBuilder).Append(v)
				} else {
					b.Field(i).AppendNull()
				}
			}
			i32 := func(i int, v int32) {
				if v >= 0 || i == 1 || i == 15 {
					b.Field(i).(*array.Int32Builder).Append(v)
				} else {
					b.Field(i).AppendNull()
				}
			}
			str(0, name, true)
			i32(1, x.dataType)
			i32(2, x.size)
			str(3, "'", x.quoted)
			str(4, "'", x.quoted)
			lb := b.Field(5).(*array.ListBuilder)
			lb.Append(true)
			for _, p := range x.createParams {
				lb.ValueBuilder().(*array.StringBuilder).Append(p)
			}
			b.Field(6).(*array.Int32Builder).Append(1) // nullable
			b.Field(7).(*array.BooleanBuilder).Append(x.caseSens)
			b.Field(8).(*array.Int32Builder).Append(3) // searchable with any operator
			b.Field(9).(*array.BooleanBuilder).Append(x.unsigned)
			b.Field(10).(*array.BooleanBuilder).Append(x.fixedScale)
			b.Field(11).(*array.BooleanBuilder).Append(false) // auto increment
			str(12, name, true)
			b.Field(13).(*array.Int32Builder).Append(x.minScale)
			b.Field(14).(*array.Int32Builder).Append(x.maxScale)
			i32(15, x.sqlDataType)
			i32(16, x.subcode)
			i32(17, x.radix)
			b.Field(18).AppendNull() // interval precision
		}
		return nil
	})
}

// like matches s against a Flight SQL filter pattern (SQL LIKE: % any
// run, _ one character, \ escapes); a nil pattern matches everything.
func like(pattern *string, s string) bool {
	if pattern == nil {
		return true
	}
	return likeMatch([]rune(*pattern), []rune(s))
}

func likeMatch(p, s []rune) bool {
	for len(p) > 0 {
		switch {
		case p[0] == '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeMatch(p, s[i:]) {
					return true
				}
			}
			return false
		case p[0] == '_':
			if len(s) == 0 {
				return false
			}
		case p[0] == '\\' && len(p) > 1:
			p = p[1:]
			fallthrough
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
		}
		p, s = p[1:], s[1:]
	}
	return len(s) == 0
}

// registerSqlInfo describes the server to clients (GetSqlInfo).
func (h *handler) registerSqlInfo() error {
	info := map[afsql.SqlInfo]any{
		afsql.SqlInfoFlightSqlServerName:                        "asofsql",
		afsql.SqlInfoFlightSqlServerVersion:                     pgwire.Version,
		afsql.SqlInfoFlightSqlServerArrowVersion:                arrowVersion(),
		afsql.SqlInfoFlightSqlServerReadOnly:                    false,
		afsql.SqlInfoFlightSqlServerSql:                         true,
		afsql.SqlInfoFlightSqlServerSubstrait:                   false,
		afsql.SqlInfoFlightSqlServerTransaction:                 int32(afsql.SqlTransactionTransaction),
		afsql.SqlInfoFlightSqlServerCancel:                      true,
		afsql.SqlInfoFlightSqlServerBulkIngestion:               true,
		afsql.SqlInfoFlightSqlServerIngestTransactionsSupported: true,
		// Prepared statements and transactions have no timeout of their
		// own: they end with the connection that created them.
		afsql.SqlInfoFlightSqlServerStatementTimeout:   int32(0),
		afsql.SqlInfoFlightSqlServerTransactionTimeout: int32(0),
		afsql.SqlInfoDDLCatalog:                        false,
		afsql.SqlInfoDDLSchema:                         false,
		afsql.SqlInfoDDLTable:                          true,
		// Unquoted identifiers fold to lower case (SqlSupportedCaseSensitivity LOWERCASE).
		afsql.SqlInfoIdentifierCase:                        int32(3),
		afsql.SqlInfoIdentifierQuoteChar:                   `"`,
		afsql.SqlInfoAllTablesAreASelectable:               true,
		afsql.SqlInfoNullOrdering:                          int32(afsql.SqlNullOrderingSortHigh),
		afsql.SqlInfoSearchStringEscape:                    `\`,
		afsql.SqlInfoSupportsColumnAliasing:                true,
		afsql.SqlInfoNullPlusNullIsNull:                    true,
		afsql.SqlInfoSupportsNonNullableColumns:            true,
		afsql.SqlInfoSchemaTerm:                            "schema",
		afsql.SqlInfoCatalogTerm:                           "database",
		afsql.SqlInfoProcedureTerm:                         "function",
		afsql.SqlInfoTransactionsSupported:                 true,
		afsql.SqlInfoDefaultTransactionIsolation:           int32(2), // READ COMMITTED
		afsql.SqlInfoSupportedTransactionsIsolationlevels:  int32(1<<1 | 1<<2),
		afsql.SqlInfoDataDefinitionCausesTransactionCommit: false,
		afsql.SqlInfoDataDefinitionsInTransactionsIgnored:  false,
		afsql.SqlInfoBatchUpdatesSupported:                 true,
		afsql.SqlInfoSavePointsSupported:                   false,
		afsql.SqlInfoNamedParametersSupported:              false,
		afsql.SqlInfoStoredProceduresSupported:             false,
	}
	for k, v := range info {
		if err := h.RegisterSqlInfo(k, v); err != nil {
			return err
		}
	}
	return nil
}

// arrowVersion is the arrow-go release the server is built with.
func arrowVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/apache/arrow-go/v18" {
				return strings.TrimPrefix(m.Version, "v")
			}
		}
	}
	return "18"
}
