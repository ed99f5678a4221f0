package pgjson

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJSONB(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":1, "a" : [1,2, {"c":  "x\u00e9"}], "aa": 1.50, "b": 1e2}`: `{"a": [1, 2, {"c": "xé"}], "b": 100, "aa": 1.50}`,
		` [ ] `:                             `[]`,
		`-0`:                                `0`,
		`1.5e-1`:                            `0.15`,
		`-1.25E+1`:                          `-12.5`,
		`"a\"b\\c\n\u0001"`:                 `"a\"b\\c\n\u0001"`,
		`"\ud83d\ude00"`:                    `"😀"`,
		`{"a":{"b":null,"a":[true,false]}}`: `{"a": {"a": [true, false], "b": null}}`,
	} {
		v, err := ParseJSONB(in)
		require.NoError(t, err, in)
		require.Equal(t, want, v.JSONB(), in)
	}
}

func TestParseErrors(t *testing.T) {
	for in, detail := range map[string]string{
		`{"a":1,}`:    `Expected string, but found "}".`,
		`{"a" 1}`:     `Expected ":", but found "1".`,
		`[1,2`:        `The input string ended unexpectedly.`,
		`abc`:         `Token "abc" is invalid.`,
		`"\q"`:        `Escape sequence "\q" is invalid.`,
		`1 2`:         `Expected end of input, but found "2".`,
		`[1 2]`:       `Expected "," or "]", but found "2".`,
		`{"a":1 "b"}`: `Expected "," or "}", but found ""b"".`,
		`]`:           `Expected JSON value, but found "]".`,
		"\"a\tb\"":    `Character with value 0x09 must be escaped.`,
		`01`:          `Token "01" is invalid.`,
		``:            `The input string ended unexpectedly.`,
	} {
		_, err := Parse(in)
		require.Error(t, err, in)
		require.Equal(t, detail, err.(*Error).Detail, in)
	}
	_, err := ParseJSONB(`"\u0000"`)
	require.True(t, err.(*Error).Unicode)
	_, err = Parse(`"\u0000"`)
	require.NoError(t, err)
}

func TestAccess(t *testing.T) {
	v, err := Parse(`{"a": {"b" : [1, "x", null]}, "a": 2, "c": {"d":1}}`)
	require.NoError(t, err)
	a, ok := v.Field("a")
	require.True(t, ok)
	require.Equal(t, "2", a.Raw)
	c, _ := v.Field("c")
	require.Equal(t, `{"d":1}`, c.Raw)
	_, ok = v.Index(0)
	require.False(t, ok)
	arr, _ := Parse(`[1, "x", null]`)
	e, _ := arr.Index(-2)
	s, ok := e.Text(false)
	require.True(t, ok)
	require.Equal(t, "x", s)
	e, _ = arr.Index(2)
	_, ok = e.Text(false)
	require.False(t, ok)
	_, ok = arr.Index(3)
	require.False(t, ok)
}
