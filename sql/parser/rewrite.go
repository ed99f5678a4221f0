package parser

import (
	"sort"
	"strings"
)

// edits collects, per token of one statement, what the rewriter emits for
// it: pre (inserted before it), rep (its replacement, when hasRep) and
// post (inserted after it). Tokens without edits are copied verbatim.
//
// Insertions are kept as lists, not concatenated as they come: a chain
// such as x::int::int::... prepends to one token once per cast, and
// growing one string each time would be quadratic.
type edits struct {
	toks   []token
	pre    [][]string // in insertion order; emitted last first
	rep    []string
	hasRep []bool
	post   [][]string
	// postOuter is emitted after post: a construct found early whose
	// closing text must still wrap what later rewrites attach to the same
	// token (AT TIME ZONE's ")" after a zone that is a typed literal).
	postOuter [][]string
}

func newEdits(toks []token) *edits {
	n := len(toks)
	return &edits{toks: toks, pre: make([][]string, n), rep: make([]string, n), hasRep: make([]bool, n), post: make([][]string, n), postOuter: make([][]string, n)}
}

// prepend inserts s before token i, in front of earlier insertions: an
// outer construct discovered later wraps the inner one.
func (e *edits) prepend(i int, s string) { e.pre[i] = append(e.pre[i], s) }

func (e *edits) replace(i int, s string) { e.rep[i], e.hasRep[i] = s, true }

func (e *edits) drop(i int) { e.replace(i, "") }

func (e *edits) appendAfter(i int, s string) { e.post[i] = append(e.post[i], s) }

// appendOuter inserts s after token i and after everything appendAfter
// attaches to it, whenever that is called.
func (e *edits) appendOuter(i int, s string) { e.postOuter[i] = append(e.postOuter[i], s) }

// segment maps a run of the rewritten text back to the original. A
// verbatim segment maps byte for byte; any other maps every byte to orig
// (the start of the token it replaces or is attached to).
type segment struct {
	rw, orig, n int
	verbatim    bool
}

// posMap translates byte offsets of a rewritten statement back to byte
// offsets of the original input.
type posMap struct {
	segs []segment
	end  int // original offset for positions past the rewritten text
}

// toOrig maps a rewritten byte offset to an original byte offset.
func (m *posMap) toOrig(rw int) int {
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].rw > rw }) - 1
	if i < 0 || len(m.segs) == 0 {
		return m.end
	}
	s := m.segs[i]
	if rw >= s.rw+s.n {
		return m.end
	}
	if s.verbatim {
		return s.orig + (rw - s.rw)
	}
	return s.orig
}

// materialize builds the rewritten SQL and its position map. rwStart[i] is
// the rewritten offset where token i's own text (after its pre insertion)
// begins, preStart[i] where its pre insertion begins.
func (e *edits) materialize(src string, end int) (string, *posMap, []int, []int) {
	var b strings.Builder
	m := &posMap{end: end, segs: make([]segment, 0, 2*len(e.toks))}
	b.Grow(end - e.toks[0].start + 16)
	rwStart := make([]int, len(e.toks))
	preStart := make([]int, len(e.toks))
	add := func(s string, orig int, verbatim bool) {
		if s == "" {
			return
		}
		m.segs = append(m.segs, segment{rw: b.Len(), orig: orig, n: len(s), verbatim: verbatim})
		b.WriteString(s)
	}
	for i, t := range e.toks {
		if i > 0 {
			add(blank(src[e.toks[i-1].end:t.start]), e.toks[i-1].end, true)
		}
		preStart[i] = b.Len()
		for k := len(e.pre[i]) - 1; k >= 0; k-- {
			add(e.pre[i][k], t.start, false)
		}
		rwStart[i] = b.Len()
		if e.hasRep[i] {
			add(e.rep[i], t.start, false)
		} else {
			text, verbatim := defaultText(src, t)
			add(text, t.start, verbatim)
		}
		for _, s := range e.post[i] {
			add(s, t.start, false)
		}
		for k := len(e.postOuter[i]) - 1; k >= 0; k-- {
			add(e.postOuter[i][k], t.start, false)
		}
	}
	return b.String(), m, rwStart, preStart
}

// blank turns the text between two tokens (whitespace and comments) into
// whitespace of the same length, so TiDB never sees comment syntax (its
// "/*!" and "#" rules differ) while offsets stay aligned.
func blank(gap string) string {
	clean := true
	for i := 0; i < len(gap); i++ {
		if !isSpace(gap[i]) {
			clean = false
			break
		}
	}
	if clean {
		return gap
	}
	b := []byte(gap)
	for i, c := range b {
		if c != '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// defaultText is what a token becomes in the TiDB dialect when no pass
// edited it, and whether that text maps byte for byte onto the original.
func defaultText(src string, t token) (string, bool) {
	orig := src[t.start:t.end]
	switch t.kind {
	case tkIdent:
		// Unquoted names fold to lower case as in Postgres, so the AST's
		// original-case name (.O) is the Postgres name in every case.
		return t.val, true
	case tkString:
		if orig[0] == '\'' {
			return orig, true
		}
		return quoteString(t.val), false
	case tkParam:
		return "?", false
	}
	return orig, true
}

// quoteString renders s as a standard SQL string literal.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// quoteIdent renders s as a double-quoted identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// tidbOnlyReserved are words TiDB reserves that Postgres lets users take
// as names (or does not know at all). In DML they are double-quoted before
// TiDB sees them, so `SELECT key FROM t` works and MySQL operators such as
// DIV, MOD, XOR, REGEXP never take effect. A following "(" keeps the word
// as a function name (rank() OVER ..., mod(a, b), replace(...)).
var tidbOnlyReserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`add blob call change continue cursor database databases
		day_hour day_microsecond day_minute day_second delayed describe distinctrow div dual
		elseif enclosed escaped exit force fulltext high_priority hour_microsecond hour_minute
		hour_second ignore index infile int1 int3 iterate key keys kill leave linear lines load
		lock long longblob longtext low_priority match maxvalue mediumblob mediumint mediumtext
		middleint minute_microsecond minute_second mod no_write_to_binlog optimize option
		optionally outfile read regexp release rename repeat replace require rlike
		second_microsecond show spatial sql sqlexception sqlstate sqlwarning sql_big_result
		sql_calc_found_rows sql_small_result ssl starting stored straight_join terminated
		tidb_current_tso tinyblob tinytext trigger unlock unsigned until usage use utc_date
		utc_time utc_timestamp varbinary varcharacter virtual while write xor year_month zerofill
		cume_dist dense_rank first_value lag last_value lead nth_value ntile percent_rank rank
		row_number`) {
		tidbOnlyReserved[w] = true
	}
}

// quoteTiDBReserved quotes the tidbOnlyReserved words of a DML statement
// that are used as names.
func quoteTiDBReserved(toks []token, e *edits) {
	for i, t := range toks {
		if t.kind != tkIdent || !tidbOnlyReserved[t.val] || e.hasRep[i] {
			continue
		}
		if i+1 < len(toks) && toks[i+1].isOp("(") {
			continue
		}
		e.replace(i, quoteIdent(t.val))
	}
}
