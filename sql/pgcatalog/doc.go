// Package pgcatalog builds the virtual pg_catalog and information_schema
// tables Postgres clients read (psql's \dt, \d, \d table, \l, \dn) from the
// live asofsql catalog. The planner consults it when a FROM item names one
// of these schemas, or an unqualified name that is a pg_catalog table
// (pg_catalog is searched first, as in Postgres' search_path).
//
// # Contract
//
//   - NewSource(db, user, tables) describes the database for one statement:
//     its name, the connected user, and the user's tables (all in schema
//     public). Table(schema, name) materializes one virtual table: its
//     columns and rows, built from that Source. Tables are small: one row
//     per relation, column, type, ...
//   - OIDs are stable: a user table's is FirstUserOID + catalog.TableInfo.ID
//     (unique per CREATE TABLE, kept across restarts); pg_catalog and
//     information_schema objects, namespaces, types, access methods and
//     collations carry Postgres 15's own OIDs. A table created inside an
//     open transaction block (ID 0) gets an OID after every committed one.
//     Within one statement every table agrees (pg_class.oid =
//     pg_attribute.attrelid = ...), and psql can look a table up in one
//     query and inline its OID in the next.
//   - Column types map Postgres' catalog types onto asofsql's: oid, xid and
//     regproc columns are bigint; name and "char" are text; arrays
//     (aclitem[], oid[], int2vector, text[]) are text holding Postgres'
//     array text form ('{a,b}'), NULL where Postgres has NULL.
//   - Every object is owned by the connected user (role OID 10, the
//     bootstrap superuser's OID): asofsql has no roles or privileges.
//   - What exists: schemas pg_catalog, public, information_schema; the
//     user's tables (relkind 'r', access method heap, no indexes, rules,
//     triggers, checks, defaults, policies or inheritance, so the tables
//     describing those are empty); their columns with types, typmods and
//     NOT NULL; the column types asofsql supports in pg_type; collations
//     default, C and POSIX; one database (encoding UTF8, collation C: text
//     compares bytewise).
//
// Functions over this catalog that Postgres implements with catalog
// lookups (pg_table_is_visible, pg_get_userbyid, pg_table_size, ::regclass) are expanded
// by the planner into expressions over the same Source (see Source.Rel and
// friends), so they agree with the tables.
package pgcatalog
