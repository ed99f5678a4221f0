package copyfmt

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/asofsql/asofsql/sqlerr"
	"github.com/asofsql/asofsql/sqltypes"
	"github.com/stretchr/testify/require"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	sqltypes.Int4Type.Field("id", false),
	sqltypes.TextType.Field("name", true),
	sqltypes.TimestampType.Field("ts", true),
}, nil)

// readAll parses input and renders every value with ValueStr ("NULL").
func readAll(t *testing.T, input string, opts Options) ([][]string, error) {
	t.Helper()
	return readAllFrom(t, strings.NewReader(input), opts)
}

// readAllFrom is readAll of a stream.
func readAllFrom(t *testing.T, in io.Reader, opts Options) ([][]string, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	if opts.Table == "" {
		opts.Table = "t"
	}
	r, err := NewReader(in, testSchema, opts, mem)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	var out [][]string
	for r.Next() {
		rec := r.RecordBatch()
		if opts.BatchRows > 0 {
			require.LessOrEqual(t, int(rec.NumRows()), opts.BatchRows)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]string, rec.NumCols())
			for j := range row {
				if rec.Column(j).IsNull(i) {
					row[j] = "NULL"
				} else {
					row[j] = rec.Column(j).ValueStr(i)
				}
			}
			out = append(out, row)
		}
	}
	return out, r.Err()
}

func TestTextFormat(t *testing.T) {
	null := "NIL"
	for _, tc := range []struct {
		name  string
		input string
		opts  Options
		want  [][]string
	}{
		{"basic", "1\tab\t2024-01-02 03:04:05\n2\t\\N\t\\N\n", Options{}, [][]string{{"1", "ab", "2024-01-02T03:04:05"}, {"2", "NULL", "NULL"}}},
		{"no final newline, CRLF", "1\tx\t\\N\r\n2\ty\t\\N", Options{}, [][]string{{"1", "x", "NULL"}, {"2", "y", "NULL"}}},
		{"escapes", "1\ta\\tb\\nc\\\\d\\x41\\101\\q\t\\N\n", Options{}, [][]string{{"1", "a\tb\nc\\dAAq", "NULL"}}},
		{"escaped delimiter", "1\ta\\\tb\t\\N\n", Options{}, [][]string{{"1", "a\tb", "NULL"}}},
		{"escaped null marker is text", "1\t\\\\N\t\\N\n", Options{}, [][]string{{"1", `\N`, "NULL"}}},
		{"empty string is not null", "1\t\t\\N\n", Options{}, [][]string{{"1", "", "NULL"}}},
		{"custom delimiter and null", "1|NIL|NIL\n", Options{Delimiter: '|', Null: &null}, [][]string{{"1", "NULL", "NULL"}}},
		{"header", "id\tname\tts\n1\tx\t\\N\n", Options{Header: true}, [][]string{{"1", "x", "NULL"}}},
		{"end marker", "1\tx\t\\N\n\\.\ngarbage\n", Options{}, [][]string{{"1", "x", "NULL"}}},
		{"batches", "1\ta\t\\N\n2\tb\t\\N\n3\tc\t\\N\n", Options{BatchRows: 2}, [][]string{{"1", "a", "NULL"}, {"2", "b", "NULL"}, {"3", "c", "NULL"}}},
		{"empty input", "", Options{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, tc.input, tc.opts)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestCSVFormat(t *testing.T) {
	null := "NULL"
	for _, tc := range []struct {
		name  string
		input string
		opts  Options
		want  [][]string
	}{
		{"basic", "1,ab,2024-01-02 03:04:05\n2,,\n", Options{Format: CSV}, [][]string{{"1", "ab", "2024-01-02T03:04:05"}, {"2", "NULL", "NULL"}}},
		{"quoted empty is empty string", "1,\"\",\n", Options{Format: CSV}, [][]string{{"1", "", "NULL"}}},
		{"quotes, doubled quotes, delimiter inside", "1,\"a,\"\"b\"\"\",\n", Options{Format: CSV}, [][]string{{"1", `a,"b"`, "NULL"}}},
		{"quoted newline spans lines", "1,\"line1\nline2\",\n2,x,\n", Options{Format: CSV}, [][]string{{"1", "line1\nline2", "NULL"}, {"2", "x", "NULL"}}},
		{"header", "id,name,ts\n1,x,\n", Options{Format: CSV, Header: true}, [][]string{{"1", "x", "NULL"}}},
		{"null string; quoted null string is text", "1,NULL,NULL\n2,\"NULL\",NULL\n", Options{Format: CSV, Null: &null}, [][]string{{"1", "NULL", "NULL"}, {"2", "NULL", "NULL"}}},
		{"delimiter", "1;x;\n", Options{Format: CSV, Delimiter: ';'}, [][]string{{"1", "x", "NULL"}}},
		{"backslash is literal", "1,a\\N,\n", Options{Format: CSV}, [][]string{{"1", `a\N`, "NULL"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, tc.input, tc.opts)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	// The quoted "NULL" above is the text NULL, not a NULL: check directly.
	got, err := readAll(t, "2,\"NULL\",NULL\n", Options{Format: CSV, Null: &null})
	require.NoError(t, err)
	require.Equal(t, "NULL", got[0][1])
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, err := NewReader(strings.NewReader("2,\"NULL\",NULL\n"), testSchema, Options{Format: CSV, Null: &null}, mem)
	require.NoError(t, err)
	defer r.Release()
	require.True(t, r.Next())
	require.False(t, r.RecordBatch().Column(1).IsNull(0))
	require.True(t, r.RecordBatch().Column(2).IsNull(0))
}

func TestErrorsNameTableColumnLine(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		opts        Options
		code        string
		msg, detail string
	}{
		{"bad integer", "1\ta\t\\N\nx\tb\t\\N\n", Options{}, sqlerr.InvalidTextRepresentation, "integer", `COPY t, line 2, column id: "x"`},
		{"overflow", "99999999999\ta\t\\N\n", Options{}, sqlerr.NumericValueOutOfRange, "integer", `COPY t, line 1, column id: "99999999999"`},
		{"bad timestamp", "1\ta\tnope\n", Options{}, sqlerr.InvalidDatetimeFormat, "timestamp", `COPY t, line 1, column ts: "nope"`},
		{"missing column", "1\ta\n", Options{}, sqlerr.BadCopyFileFormat, `missing data for column "ts"`, `COPY t, line 1: "1\ta"`},
		{"extra column", "1\ta\t\\N\tzz\n", Options{}, sqlerr.BadCopyFileFormat, "extra data after last expected column", "COPY t, line 1"},
		{"not null", "1\ta\t\\N\n\\N\tb\t\\N\n", Options{}, sqlerr.NotNullViolation, `column "id" of relation "t"`, "COPY t, line 2"},
		{"csv not null", "id,name,ts\n,b,\n", Options{Format: CSV, Header: true}, sqlerr.NotNullViolation, `column "id"`, "COPY t, line 2"},
		{"unterminated quote", "1,\"abc\n", Options{Format: CSV}, sqlerr.BadCopyFileFormat, "unterminated CSV quoted field", "COPY t, line 1"},
		{"line too long", "1\t" + strings.Repeat("x", 200) + "\t\\N\n", Options{MaxLine: 100}, codeProgramLimitExceeded, "longer than the maximum", "COPY t, line 1"},
		{"invalid utf8", "1\t\xff\t\\N\n", Options{}, "22021", "UTF8", "column name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, tc.input, tc.opts)
			e, ok := sqlerr.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, tc.code, e.Code, e.Message)
			require.Contains(t, e.Message, tc.msg)
			require.Contains(t, e.Detail, tc.detail)
		})
	}
}

func TestBadOptions(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, opts := range []Options{
		{Format: CSV, Delimiter: '"'},
		{Delimiter: '\n'},
		{Delimiter: '\\'},
		{Format: Binary, Header: true},
		{Format: 9},
	} {
		_, err := NewReader(strings.NewReader(""), testSchema, opts, mem)
		require.Error(t, err, "%+v", opts)
		require.NotEmpty(t, sqlerr.Code(err))
	}
	_, err := ParseFormat("xml")
	require.Equal(t, sqlerr.InvalidParameterValue, sqlerr.Code(err))
}

// binStream builds a binary COPY stream of (int4, text, timestamp) rows;
// a nil value is NULL.
func binStream(rows [][]any, trailer bool) string {
	var b bytes.Buffer
	b.Write(binarySignature)
	binary.Write(&b, binary.BigEndian, uint32(0))
	binary.Write(&b, binary.BigEndian, uint32(3)) // header extension, skipped
	b.WriteString("ext")
	for _, row := range rows {
		binary.Write(&b, binary.BigEndian, int16(len(row)))
		for _, v := range row {
			switch v := v.(type) {
			case nil:
				binary.Write(&b, binary.BigEndian, int32(-1))
			case int32:
				binary.Write(&b, binary.BigEndian, int32(4))
				binary.Write(&b, binary.BigEndian, v)
			case string:
				binary.Write(&b, binary.BigEndian, int32(len(v)))
				b.WriteString(v)
			case int64: // timestamp: microseconds since 2000-01-01
				binary.Write(&b, binary.BigEndian, int32(8))
				binary.Write(&b, binary.BigEndian, v)
			}
		}
	}
	if trailer {
		binary.Write(&b, binary.BigEndian, int16(-1))
	}
	return b.String()
}

func TestBinaryFormat(t *testing.T) {
	got, err := readAll(t, binStream([][]any{{int32(1), "héllo", int64(0)}, {int32(-2), nil, nil}}, true), Options{Format: Binary})
	require.NoError(t, err)
	require.Equal(t, [][]string{{"1", "héllo", "2000-01-01T00:00:00"}, {"-2", "NULL", "NULL"}}, got)
	got, err = readAll(t, binStream([][]any{{int32(7), "x", nil}}, false), Options{Format: Binary, BatchRows: 1})
	require.NoError(t, err, "a missing trailer is tolerated")
	require.Equal(t, [][]string{{"7", "x", "NULL"}}, got)

	full := binStream([][]any{{int32(1), "a", nil}}, true)
	for _, tc := range []struct {
		name, input string
		code        string
		msg, detail string
	}{
		{"bad signature", "PGCOPY\n\xff\r\n\x01" + full[11:], sqlerr.BadCopyFileFormat, "signature", ""},
		{"truncated header", full[:13], sqlerr.BadCopyFileFormat, "missing flags", ""},
		{"critical flag", full[:11] + "\x00\x02\x00\x00" + full[15:], sqlerr.BadCopyFileFormat, "critical flags", ""},
		{"field count", binStream([][]any{{int32(1), "a"}}, true), sqlerr.BadCopyFileFormat, "row field count is 2, expected 3", "COPY t, line 1"},
		{"truncated tuple", full[:len(full)-6], sqlerr.BadCopyFileFormat, "unexpected EOF", "COPY t, line 1"},
		{"data after trailer", full + "x", sqlerr.BadCopyFileFormat, "after EOF marker", ""},
		{"not null", binStream([][]any{{int32(1), "a", nil}, {nil, "b", nil}}, true), sqlerr.NotNullViolation, `column "id"`, "COPY t, line 2"},
		{"short value", binStream([][]any{{int32(1), "a", "abc"}}, true), sqlerr.ProtocolViolation, "insufficient data", "COPY t, line 1, column ts"},
		{"long value", binStream([][]any{{int32(1), "a", "123456789"}}, true), "22P03", "timestamp", "COPY t, line 1, column ts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Whole in the read buffer (decoded where it lies) and a
			// byte at a time (read field by field): the same error.
			for _, in := range []io.Reader{strings.NewReader(tc.input), iotest.OneByteReader(strings.NewReader(tc.input))} {
				_, err := readAllFrom(t, in, Options{Format: Binary})
				e, ok := sqlerr.As(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, tc.code, e.Code, e.Message)
				require.Contains(t, e.Message, tc.msg)
				require.Contains(t, e.Detail, tc.detail)
			}
		})
	}
}

// chunkReader returns its input in pieces of random sizes.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rng.IntN(3000))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// TestBinaryTuplesAcrossReads decodes the same binary stream delivered
// whole, in random pieces and a byte at a time: tuples decoded where they
// lie in the read buffer and tuples read field by field (those that span
// a read, or are larger than the buffer) must give the same rows.
func TestBinaryTuplesAcrossReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var rows [][]any
	for i := range 3000 {
		row := []any{int32(i), nil, nil}
		if rng.IntN(5) > 0 {
			row[1] = strings.Repeat(string(rune('a'+i%26)), rng.IntN(40))
		}
		if i%700 == 3 {
			row[1] = strings.Repeat("big", 30000) // larger than the read buffer
		}
		if rng.IntN(4) > 0 {
			row[2] = rng.Int64N(1 << 50)
		}
		rows = append(rows, row)
	}
	input := binStream(rows, true)
	want, err := readAllFrom(t, iotest.OneByteReader(strings.NewReader(input)), Options{Format: Binary})
	require.NoError(t, err)
	require.Len(t, want, len(rows))
	for name, in := range map[string]io.Reader{
		"whole":  strings.NewReader(input),
		"pieces": &chunkReader{data: []byte(input), rng: rng},
		"halves": iotest.HalfReader(strings.NewReader(input)),
	} {
		got, err := readAllFrom(t, in, Options{Format: Binary, BatchRows: 100})
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
}

// TestBuildersSizedForOneBatch checks the builders are reserved for
// exactly the next batch of the usual (power-of-two) size, not twice it:
// Arrow rounds a reservation up past a power of two.
func TestBuildersSizedForOneBatch(t *testing.T) {
	const batch = 1024
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	data := ticksData(Binary, 3*batch)
	r, err := NewReader(bytes.NewReader(data), ticksSchema, Options{Format: Binary, Table: "ticks", BatchRows: batch}, mem)
	require.NoError(t, err)
	defer r.Release()
	require.True(t, r.Next())
	for i, b := range r.builders {
		require.Equal(t, batch, b.Cap(), "builder %d", i)
	}
	rows := int(r.RecordBatch().NumRows())
	for r.Next() {
		rows += int(r.RecordBatch().NumRows())
	}
	require.NoError(t, r.Err())
	require.Equal(t, 3*batch, rows)
}
