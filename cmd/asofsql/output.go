package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/asofsql/asofsql"
	"github.com/asofsql/asofsql/sqltypes"
)

// formats selectable with --format.
const (
	formatTable = "table"
	formatCSV   = "csv"
	formatJSON  = "json"
)

func checkFormat(f string) error {
	switch f {
	case formatTable, formatCSV, formatJSON:
		return nil
	}
	return errUsage(fmt.Sprintf("--format %q: want table, csv or json", f))
}

// forEachRow reads c to its end and calls fn with each row's values as
// Postgres text (nil for NULL), encoded with the session's settings
// (TimeZone, extra_float_digits). row is reused between calls.
func forEachRow(c *asofsql.Cursor, opts *sqltypes.Options, fn func(row []*string) error) error {
	cols := c.Columns()
	row := make([]*string, len(cols))
	var buf []byte
	for c.Next() {
		b := c.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			for j, col := range b.Columns() {
				row[j] = nil
				if col.IsNull(i) {
					continue
				}
				buf = sqltypes.EncodeText(buf[:0], col, i, cols[j].Type, opts)
				s := string(buf)
				row[j] = &s
			}
			if err := fn(row); err != nil {
				return err
			}
		}
	}
	return c.Err()
}

// writeResult prints a row-returning result. CSV and JSON stream batch
// by batch; the aligned table needs every row first for its widths (as
// psql does).
func writeResult(w io.Writer, c *asofsql.Cursor, opts *sqltypes.Options, format string) error {
	cols := c.Columns()
	switch format {
	case formatCSV:
		return writeCSV(w, c, cols, opts)
	case formatJSON:
		return writeJSON(w, c, cols, opts)
	}
	rs := &rowSet{cols: cols}
	err := forEachRow(c, opts, func(row []*string) error {
		rs.rows = append(rs.rows, slices.Clone(row))
		return nil
	})
	if err != nil {
		return err
	}
	return rs.writeTable(w)
}

// rowSet is a result read to the end, as text.
type rowSet struct {
	cols []asofsql.Column
	rows [][]*string // nil is NULL
}

// numeric columns are right-aligned, as psql does.
func numeric(t sqltypes.Type) bool {
	switch t.Kind {
	case sqltypes.Int2, sqltypes.Int4, sqltypes.Int8, sqltypes.Float4, sqltypes.Float8, sqltypes.Numeric:
		return true
	}
	return false
}

// writeTable prints psql's aligned format: centred headers, a dashed
// rule, cells padded to the column width (numbers to the right), and the
// "(N rows)" footer.
func (rs *rowSet) writeTable(w io.Writer) error {
	width := make([]int, len(rs.cols))
	for j, c := range rs.cols {
		width[j] = utf8.RuneCountInString(c.Name)
	}
	for _, r := range rs.rows {
		for j, v := range r {
			if v != nil {
				width[j] = max(width[j], utf8.RuneCountInString(*v))
			}
		}
	}
	var sb strings.Builder
	// psql ends header lines with the padding and a space, and data lines
	// right after the last value (after its padding when right-aligned).
	line := func(header bool, cell func(j int) string) {
		for j := range rs.cols {
			if j > 0 {
				sb.WriteString("|")
			}
			sb.WriteString(" ")
			c := cell(j)
			if j == len(rs.cols)-1 && !header && !numeric(rs.cols[j].Type) {
				c = strings.TrimRight(c, " ")
			}
			sb.WriteString(c)
			if j < len(rs.cols)-1 || header {
				sb.WriteString(" ")
			}
		}
		sb.WriteString("\n")
	}
	pad := func(s string, n int, right bool) string {
		fill := strings.Repeat(" ", n-utf8.RuneCountInString(s))
		if right {
			return fill + s
		}
		return s + fill
	}
	line(true, func(j int) string {
		name := rs.cols[j].Name
		extra := width[j] - utf8.RuneCountInString(name)
		return strings.Repeat(" ", extra/2) + name + strings.Repeat(" ", extra-extra/2)
	})
	for j := range rs.cols {
		if j > 0 {
			sb.WriteString("+")
		}
		sb.WriteString(strings.Repeat("-", width[j]+2))
	}
	sb.WriteString("\n")
	for _, r := range rs.rows {
		line(false, func(j int) string {
			v := ""
			if r[j] != nil {
				v = *r[j]
			}
			return pad(v, width[j], numeric(rs.cols[j].Type))
		})
	}
	if len(rs.rows) == 1 {
		sb.WriteString("(1 row)\n\n")
	} else {
		fmt.Fprintf(&sb, "(%d rows)\n\n", len(rs.rows))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// writeCSV prints a header line and one line per row; NULL is an empty
// field, as psql --csv prints it.
func writeCSV(w io.Writer, c *asofsql.Cursor, cols []asofsql.Column, opts *sqltypes.Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := csv.NewWriter(bw)
	rec := make([]string, len(cols))
	for j, col := range cols {
		rec[j] = col.Name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	err := forEachRow(c, opts, func(row []*string) error {
		for j, v := range row {
			rec[j] = ""
			if v != nil {
				rec[j] = *v
			}
		}
		return cw.Write(rec)
	})
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// writeJSON prints one JSON array of objects per result: numbers as JSON
// numbers where their text is one (NaN and Infinity stay strings),
// booleans as true/false, NULL as null, everything else as its text.
func writeJSON(w io.Writer, c *asofsql.Cursor, cols []asofsql.Column, opts *sqltypes.Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	names := make([][]byte, len(cols))
	for j, col := range cols {
		names[j], _ = json.Marshal(col.Name)
	}
	bw.WriteString("[")
	n := 0
	err := forEachRow(c, opts, func(row []*string) error {
		if n > 0 {
			bw.WriteString(",")
		}
		n++
		bw.WriteString("\n  {")
		for j, v := range row {
			if j > 0 {
				bw.WriteString(", ")
			}
			bw.Write(names[j])
			bw.WriteString(": ")
			bw.WriteString(jsonValue(v, cols[j].Type))
		}
		_, err := bw.WriteString("}")
		return err
	})
	if err != nil {
		bw.Flush()
		return err
	}
	if n > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

func jsonValue(v *string, t sqltypes.Type) string {
	switch {
	case v == nil:
		return "null"
	case t.Kind == sqltypes.Bool:
		if *v == "t" {
			return "true"
		}
		return "false"
	case numeric(t):
		if _, err := strconv.ParseFloat(*v, 64); err == nil && json.Valid([]byte(*v)) {
			return *v
		}
	}
	b, _ := json.Marshal(*v)
	return string(b)
}
