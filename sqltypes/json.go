package sqltypes

import (
	"errors"

	"github.com/asofsql/asofsql/internal/pgjson"
	"github.com/asofsql/asofsql/sqlerr"
)

// jsonbVersion is the first byte of jsonb's binary wire form (jsonb_send).
const jsonbVersion = 1

// ParseJSON checks s as json input and returns what is stored: s itself
// for json, its normal form for jsonb. Bad input is 22P02 "invalid input
// syntax for type json" with Postgres' DETAIL (22P05 for \u0000 in jsonb).
func ParseJSON(s string, jsonb bool) (string, error) {
	if !jsonb {
		if _, err := pgjson.Parse(s); err != nil {
			return "", jsonError(err)
		}
		return s, nil
	}
	v, err := pgjson.ParseJSONB(s)
	if err != nil {
		return "", jsonError(err)
	}
	return v.JSONB(), nil
}

func jsonError(err error) error {
	var je *pgjson.Error
	if !errors.As(err, &je) {
		return err
	}
	if je.Unicode {
		return sqlerr.New(codeUntranslatable, "unsupported Unicode escape sequence").WithDetail("%s", je.Detail)
	}
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json").WithDetail("%s", je.Detail)
}
