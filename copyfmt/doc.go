// Package copyfmt is PostgreSQL's COPY data format: Reader turns a COPY
// stream (text, CSV or binary) into Arrow record batches of a given schema,
// and AppendText escapes one value for COPY TO's text format. The catalog
// reads every COPY FROM through it (a file or the client's STDIN alike),
// `asofsql import` reads CSV through it to infer column types, and the
// engine's COPY TO writes text fields with AppendText (CSV and binary
// output are written by the engine itself).
//
// # Contract
//
//   - Formats: Text (tab-delimited, \N NULL, backslash escapes, \. end
//     marker), CSV (quotes, doubled quotes, multi-line quoted fields,
//     HEADER, DELIMITER, NULL string; an unquoted NULL string is NULL, a
//     quoted one is text, so "" is an empty string and an empty unquoted
//     field is NULL by default), Binary (PGCOPY signature, flags, header
//     extension, per-tuple field count, -1 NULL, -1 trailer).
//   - Values are decoded by sqltypes.DecodeText (text, CSV) and
//     sqltypes.DecodeBinary (binary), so COPY accepts exactly what
//     PostgreSQL's input and recv functions accept, with their SQLSTATEs.
//   - The schema's fields carry SQL types (sqltypes.Type.Field); a field that
//     is not nullable rejects NULL with 23502.
//   - Memory is bounded: one line/record (at most Options.MaxLine bytes, else
//     54000) plus one batch of Options.BatchRows rows.
//   - Errors are *sqlerr.Error with PostgreSQL's context line in Detail:
//     `COPY t, line 3, column a: "x"` for a bad value (22P02, 22003, ...),
//     `COPY t, line 3: "..."` for a bad row shape (22P04) or a NULL in a NOT
//     NULL column (23502).
//
// # Example
//
//	r, err := copyfmt.NewReader(conn, schema, copyfmt.Options{Format: copyfmt.CSV, Header: true, Table: "quotes"}, mem)
//	if err != nil { ... }
//	defer r.Release()
//	for r.Next() {
//		batch := r.RecordBatch() // valid until the next call to Next
//		...
//	}
//	if err := r.Err(); err != nil { ... }
package copyfmt
