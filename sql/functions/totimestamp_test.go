package functions

import (
	"testing"
)

// FuzzFromChar: no template and input make the reader panic or loop.
func FuzzFromChar(f *testing.F) {
	for _, s := range [][2]string{
		{"2024-03-05 14:07:09", "YYYY-MM-DD HH24:MI:SS"}, {"05 Mar 2024 02:07 PM", "DD Mon YYYY HH:MI AM"},
		{"1,234", "Y,YYY"}, {"2024", "FMYYYYTH"}, {"x", "\"abc\\\""}, {"-08", "TZH:TZM"}, {"", ""}, {"FM", "FM"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, s, tmpl string) {
		if fields, err := readFromChar(s, tmpl); err == nil {
			_, _ = fromCharTime(fields, s)
		}
	})
}
