package flightsql_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	afsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/stretchr/testify/require"

	"github.com/asofsql/asofsql/flightsql"
	"github.com/asofsql/asofsql/sqltypes"
)

// rowsOf fetches a metadata command's result as strings.
func rowsOf(t *testing.T, c *afsql.Client, info *flight.FlightInfo, err error) ([][]string, []arrow.RecordBatch) {
	t.Helper()
	require.NoError(t, err)
	ctx := context.Background()
	_, bs, err := fetch(ctx, t, c, info)
	require.NoError(t, err)
	var rows [][]string
	for _, b := range bs {
		for i := 0; i < int(b.NumRows()); i++ {
			var row []string
			for _, col := range b.Columns() {
				if col.IsNull(i) {
					row = append(row, "NULL")
				} else {
					row = append(row, col.ValueStr(i))
				}
			}
			rows = append(rows, row)
		}
	}
	return rows, bs
}

func TestMetadata(t *testing.T) {
	e := newEnv(t, flightsql.Config{Database: "market"})
	c := e.client(t)
	ctx := context.Background()
	exec(t, c, marketSQL)
	meta := func(info *flight.FlightInfo, err error) [][]string {
		rows, bs := rowsOf(t, c, info, err)
		release(bs)
		return rows
	}

	rows := meta(c.GetCatalogs(ctx))
	require.Equal(t, [][]string{{"market"}}, rows)

	rows = meta(c.GetDBSchemas(ctx, &afsql.GetDBSchemasOpts{}))
	require.Equal(t, [][]string{{"market", "public"}}, rows)
	pat := "pub%"
	rows = meta(c.GetDBSchemas(ctx, &afsql.GetDBSchemasOpts{DbSchemaFilterPattern: &pat}))
	require.Len(t, rows, 1)
	none := ""
	rows = meta(c.GetDBSchemas(ctx, &afsql.GetDBSchemasOpts{Catalog: &none}))
	require.Empty(t, rows, "no schema is without a catalog")

	rows = meta(c.GetTableTypes(ctx))
	require.Equal(t, [][]string{{"TABLE"}}, rows)

	rows = meta(c.GetTables(ctx, &afsql.GetTablesOpts{}))
	require.Equal(t, [][]string{{"market", "public", "quotes", "TABLE"}, {"market", "public", "trades", "TABLE"}}, rows)
	tpat := "tr_des"
	info, err := c.GetTables(ctx, &afsql.GetTablesOpts{TableNameFilterPattern: &tpat, IncludeSchema: true})
	rows, bs := rowsOf(t, c, info, err)
	require.Len(t, rows, 1)
	raw := bs[0].Column(4).(*array.Binary).Value(0)
	schema, err := flight.DeserializeSchema(raw, e.mem)
	require.NoError(t, err)
	release(bs)
	require.Equal(t, []string{"ts", "sym", "price"}, []string{schema.Field(0).Name, schema.Field(1).Name, schema.Field(2).Name})
	require.False(t, schema.Field(0).Nullable, "NOT NULL")
	typ, err := sqltypes.FromField(schema.Field(2))
	require.NoError(t, err)
	require.Equal(t, "numeric(10,2)", typ.String())
	f := schema.Field(2)
	md := afsql.ColumnMetadata{Data: &f.Metadata}
	tn, _ := md.TableName()
	require.Equal(t, "trades", tn)
	scale, _ := md.Scale()
	require.EqualValues(t, 2, scale)
	rows = meta(c.GetTables(ctx, &afsql.GetTablesOpts{TableTypes: []string{"VIEW"}}))
	require.Empty(t, rows)

	// Type information, all and by XDBC data type.
	rows = meta(c.GetXdbcTypeInfo(ctx, nil))
	var names []string
	for _, r := range rows {
		names = append(names, r[0])
	}
	require.Equal(t, []string{"boolean", "bigint", "bytea", "text", "numeric", "integer", "smallint", "real", "double precision",
		"interval", "character varying", "date", "timestamp without time zone", "timestamp with time zone"}, names)
	ts := int32(93)
	rows = meta(c.GetXdbcTypeInfo(ctx, &ts))
	require.Len(t, rows, 2)

	// No keys.
	rows = meta(c.GetPrimaryKeys(ctx, afsql.TableRef{Table: "trades"}))
	require.Empty(t, rows)
	rows = meta(c.GetExportedKeys(ctx, afsql.TableRef{Table: "trades"}))
	require.Empty(t, rows)

	// SqlInfo: what generic clients ask first.
	rows = meta(c.GetSqlInfo(ctx, []afsql.SqlInfo{afsql.SqlInfoFlightSqlServerName, afsql.SqlInfoFlightSqlServerTransaction,
		afsql.SqlInfoFlightSqlServerBulkIngestion, afsql.SqlInfoIdentifierQuoteChar}))
	// (id, [union type code, value]): 8 is FLIGHT_SQL_SERVER_TRANSACTION,
	// an int32 (code 3) = SQL_SUPPORTED_TRANSACTION_TRANSACTION.
	require.Equal(t, [][]string{{"0", `[0,"asofsql"]`}, {"8", "[3,1]"}, {"10", "[1,true]"}, {"504", `[0,"\""]`}}, rows)
	rows = meta(c.GetSqlInfo(ctx, nil))
	require.Greater(t, len(rows), 20)
}
