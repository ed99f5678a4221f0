package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
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

// rowSet is a result read to the end, as text (psql also reads a whole
// result before aligning it).
type rowSet struct {
	cols  []asofsql.Column
	rows  [][]*string // nil is NULL
	limit int         // rows shown; 0 means all
}

// readRows reads c to its end, encoding values as Postgres text with
// the session's settings (TimeZone, extra_float_digits).
func readRows(c *asofsql.Cursor, opts *sqltypes.Options) (*rowSet, error) {
	rs := &rowSet{cols: c.Columns()}
	var buf []byte
	for c.Next() {
		b := c.RecordBatch()
		for i := 0; i < int(b.NumRows()); i++ {
			row := make([]*string, len(rs.cols))
			for j, col := range b.Columns() {
				if col.IsNull(i) {
					continue
				}
				buf = sqltypes.EncodeText(buf[:0], col, i, rs.cols[j].Type, opts)
				s := string(buf)
				row[j] = &s
			}
			rs.rows = append(rs.rows, row)
		}
	}
	return rs, c.Err()
}

func (rs *rowSet) write(w io.Writer, format string) error {
	switch format {
	case formatCSV:
		return rs.writeCSV(w)
	case formatJSON:
		return rs.writeJSON(w)
	}
	return rs.writeTable(w)
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
func (rs *rowSet) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	rec := make([]string, len(rs.cols))
	for j, c := range rs.cols {
		rec[j] = c.Name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	for _, r := range rs.rows {
		for j, v := range r {
			rec[j] = ""
			if v != nil {
				rec[j] = *v
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeJSON prints one JSON array of objects per result: numbers as JSON
// numbers where their text is one (NaN and Infinity stay strings),
// booleans as true/false, NULL as null, everything else as its text.
func (rs *rowSet) writeJSON(w io.Writer) error {
	var sb strings.Builder
	sb.WriteString("[")
	for i, r := range rs.rows {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString("\n  {")
		for j, v := range r {
			if j > 0 {
				sb.WriteString(", ")
			}
			name, _ := json.Marshal(rs.cols[j].Name)
			sb.Write(name)
			sb.WriteString(": ")
			sb.WriteString(jsonValue(v, rs.cols[j].Type))
		}
		sb.WriteString("}")
	}
	if len(rs.rows) > 0 {
		sb.WriteString("\n")
	}
	sb.WriteString("]\n")
	_, err := io.WriteString(w, sb.String())
	return err
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
