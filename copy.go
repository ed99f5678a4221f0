package asofsql

import (
	"context"
	"io"

	"github.com/asofsql/asofsql/catalog"
	"github.com/asofsql/asofsql/sql/planner"
	"github.com/asofsql/asofsql/sqlerr"
)

func (s *Session) copy(ctx context.Context, snap *catalog.Snapshot, p *planner.Copy, args []any, input io.Reader) (int64, error) {
	return 0, sqlerr.New(sqlerr.FeatureNotSupported, "COPY is not supported by the embedded API yet")
}
