// Package ordering describes the row order a plan node provides and the
// order a node requires of its inputs, so the planner can prove an ASOF
// JOIN's inputs are sorted by their on column (spec §4) instead of sorting
// silently.
//
// Contract:
//   - Key is one sort key over a column index of a node's output; Lex is a
//     lexicographic ordering, most significant key first. The table order
//     of the catalog is ascending with NULLs last for every key.
//   - Props is what a node's output is known to satisfy: a Lex, classes of
//     columns known to hold equal values in every row (Equiv), and columns
//     known to hold one value in the whole output (Const). Knowledge only
//     shrinks: a zero Props promises nothing, which is always safe.
//   - Props.Satisfies(req) answers "is every output ordered by req?" It is
//     conservative: false means "not provable", never "proven unordered".
//   - Project maps Props through a projection (output column i reads input
//     column src[i], or is computed when src[i] < 0), so renames keep the
//     order and dropping an ordering column truncates it.
//
// Example: a table declared ORDER BY (sym, ts), filtered by sym = 'A',
// satisfies an ASOF requirement on ts alone:
//
//	p := ordering.Props{Lex: ordering.Lex{{Col: 1}, {Col: 0}}}
//	p = p.WithConst(1)                    // WHERE sym = 'A'
//	p.Satisfies(ordering.Lex{{Col: 0}})   // true
package ordering
