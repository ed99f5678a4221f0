package sqllogic

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/asofsql/asofsql"
)

func TestProbeScratch(t *testing.T) {
	src := os.Getenv("PROBE")
	if src == "" {
		t.Skip()
	}
	db, _ := asofsql.Open(":memory:", asofsql.WithFileDir(os.Getenv("PROBEDIR")))
	defer db.Close()
	e := &Embedded{S: db.Session()}
	for _, q := range strings.Split(src, ";;") {
		q = strings.TrimSpace(q)
		if q == "" {
			continue
		}
		fmt.Println(">>", q)
		if strings.HasPrefix(strings.ToUpper(q), "SELECT") || strings.HasPrefix(strings.ToUpper(q), "EXPLAIN") || strings.HasPrefix(strings.ToUpper(q), "SHOW") || strings.HasPrefix(strings.ToUpper(q), "WITH") {
			rows, err := e.Query(context.Background(), q)
			if err != nil {
				fmt.Println("ERR", ErrorText(err))
				continue
			}
			for _, r := range rows {
				var s []string
				for _, v := range r {
					if v == nil {
						s = append(s, "NULL")
					} else {
						s = append(s, *v)
					}
				}
				fmt.Println(strings.Join(s, "\t"))
			}
		} else if err := e.Exec(context.Background(), q); err != nil {
			fmt.Println("ERR", ErrorText(err))
		}
	}
}
