package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/asofsql/asofsql/copyfmt"
	"github.com/asofsql/asofsql/internal/safefile"
	"github.com/asofsql/asofsql/sqltypes"
)

// sampleRows is how many data rows of a CSV file type inference reads.
const sampleRows = 10_000

// fileColumn is a column of the input file: its name and, for a table the
// import creates, the type inferred for it.
type fileColumn struct {
	Name string
	Type sqltypes.Type
}

// csvHeader reads the first record of a CSV file: the column names when
// the file has a header, else only the column count (names column1, ...).
func csvHeader(path string, header bool) ([]fileColumn, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rec, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s is empty: a CSV file needs at least a header line", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: line 1: %v", path, err)
	}
	cols := make([]fileColumn, len(rec))
	seen := map[string]int{}
	for i, name := range rec {
		if !header {
			name = fmt.Sprintf("column%d", i+1)
		}
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff") // a byte order mark is not part of the name
		}
		name = strings.TrimSpace(name) // "ts, sym" names sym
		if name == "" {
			return nil, fmt.Errorf("%s: the header names no column %d (use --header=false if the first line is data)", path, i+1)
		}
		if j, dup := seen[name]; dup {
			return nil, fmt.Errorf("%s: the header names column %q twice (columns %d and %d)", path, name, j+1, i+1)
		}
		seen[name] = i
		cols[i] = fileColumn{Name: name}
	}
	return cols, nil
}

// Candidate types of a CSV column, from the most specific. A column gets
// the first candidate every sampled non-NULL value fits.
var candidates = []sqltypes.Type{
	sqltypes.Int8Type, sqltypes.Float8Type, sqltypes.BoolType,
	sqltypes.DateType, sqltypes.TimestampType, sqltypes.TimestampTZType,
}

var (
	// An integer without leading zeros: "007" is an identifier or a code
	// whose zeros matter, and stays text.
	intPattern   = regexp.MustCompile(`^[+-]?(0|[1-9][0-9]*)$`)
	floatPattern = regexp.MustCompile(`^[+-]?(0|[1-9][0-9]*)?(\.[0-9]*)?([eE][+-]?[0-9]+)?$`)
	floatWords   = map[string]bool{"nan": true, "infinity": true, "+infinity": true, "-infinity": true, "inf": true, "+inf": true, "-inf": true}
	boolWords    = map[string]bool{"true": true, "false": true, "t": true, "f": true}
	datePattern  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	// ISO 8601 date and time, without and with a UTC offset.
	tsPattern   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?)?$`)
	tstzPattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)? ?(Z|[+-][0-9]{2}(:?[0-9]{2})?)$`)
)

// fits reports whether s is written the way a value of type t usually is.
// The shapes are strict on purpose (Postgres accepts "yes" as a boolean
// and "20240102" as a date; a CSV column of such values is not meant so);
// a value must also parse as t (checked by the caller).
func fits(t sqltypes.Type, s string) bool {
	switch t.Kind {
	case sqltypes.Int8:
		return intPattern.MatchString(s)
	case sqltypes.Float8:
		if floatWords[strings.ToLower(s)] {
			return true
		}
		if !floatPattern.MatchString(s) || !strings.ContainsAny(s, "0123456789") {
			return false
		}
		// An integer that does not fit a bigint is an identifier, not a
		// measurement: it stays text rather than losing digits.
		if intPattern.MatchString(s) {
			_, err := strconv.ParseInt(s, 10, 64)
			return err == nil
		}
		return true
	case sqltypes.Bool:
		return boolWords[strings.ToLower(s)]
	case sqltypes.Date:
		return datePattern.MatchString(s)
	case sqltypes.Timestamp:
		return tsPattern.MatchString(s)
	case sqltypes.TimestampTZ:
		return tstzPattern.MatchString(s)
	}
	return false
}

// inferCSV reads up to sampleRows data rows of a CSV file as COPY does
// (quoting, NULL as an unquoted empty field) and sets each column's type:
// the first of candidates every non-NULL value fits and parses as, text
// if none does or the column holds only NULLs. It returns the rows read.
func inferCSV(ctx context.Context, path string, cols []fileColumn, header bool, mem memory.Allocator) (int, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	in := safefile.Reader(ctx, f)
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = sqltypes.TextType.Field(c.Name, true)
	}
	rd, err := copyfmt.NewReader(in, arrow.NewSchema(fields, nil), copyfmt.Options{
		Format: copyfmt.CSV, Header: header, Table: path, BatchRows: 1024,
	}, mem)
	if err != nil {
		return 0, err
	}
	defer rd.Release()
	// ok[i][k]: column i may still be candidates[k]; seen: a non-NULL value.
	ok := make([][]bool, len(cols))
	seen := make([]bool, len(cols))
	builders := make([]array.Builder, len(candidates))
	for k, t := range candidates {
		builders[k] = array.NewBuilder(mem, t.Arrow())
		defer builders[k].Release()
	}
	for i := range ok {
		ok[i] = make([]bool, len(candidates))
		for k := range ok[i] {
			ok[i][k] = true
		}
	}
	opts := sqltypes.DefaultOptions()
	n := 0
	for n < sampleRows && rd.Next() {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		b := rd.RecordBatch()
		rows := min(int(b.NumRows()), sampleRows-n)
		for i := range cols {
			col := b.Column(i).(*array.String)
			for r := 0; r < rows; r++ {
				if col.IsNull(r) {
					continue
				}
				v := col.Value(r)
				seen[i] = true
				// Spaces around a value ("1, 2.5") are judged without
				// them, but the value as it is must parse, as COPY will
				// read it.
				trimmed := strings.TrimSpace(v)
				for k, t := range candidates {
					if ok[i][k] && (!fits(t, trimmed) || sqltypes.DecodeText(builders[k], t, v, opts) != nil) {
						ok[i][k] = false
					}
				}
			}
		}
		for _, bld := range builders { // drop the values parsed for checking
			bld.NewArray().Release()
		}
		n += rows
	}
	if err := rd.Err(); err != nil {
		return n, err
	}
	for i := range cols {
		cols[i].Type = sqltypes.TextType
		for k, t := range candidates {
			if seen[i] && ok[i][k] {
				cols[i].Type = t
				break
			}
		}
	}
	return n, nil
}

// parquetColumns reads a Parquet file's schema (its columns and the SQL
// type each maps to) and row count.
func parquetColumns(path string, mem memory.Allocator) ([]fileColumn, int64, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s is not a readable Parquet file: %v", path, err)
	}
	schema, err := pqarrow.FromParquet(pf.MetaData().Schema, nil, pf.MetaData().KeyValueMetadata())
	if err != nil {
		return nil, 0, fmt.Errorf("%s: could not read the Parquet schema: %v", path, err)
	}
	cols := make([]fileColumn, schema.NumFields())
	for i, f := range schema.Fields() {
		t, err := sqltypes.FromArrow(f.Type)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: Parquet column %q has type %s, which no SQL type stores", path, f.Name, f.Type)
		}
		cols[i] = fileColumn{Name: f.Name, Type: t}
	}
	return cols, pf.NumRows(), nil
}
