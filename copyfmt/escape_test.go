package copyfmt

import "testing"

func TestAppendTextRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in    string
		delim byte
		want  string
	}{
		{"plain", '\t', "plain"},
		{"a\tb\nc\rd\\e", '\t', `a\tb\nc\rd\\e`},
		{"\b\f\v", '\t', `\b\f\v`},
		{"a|b", '|', `a\|b`},
		{"a,b\x01", ',', `a\,b` + "\x01"},
		{"a\x01b", '\x01', "a\\\x01b"},
		{"é\t", '\t', `é\t`},
	} {
		got := string(AppendText(nil, []byte(tc.in), tc.delim))
		if got != tc.want {
			t.Errorf("AppendText(%q, %q) = %q, want %q", tc.in, tc.delim, got, tc.want)
		}
		if back := string(unescapeText(nil, []byte(got))); back != tc.in {
			t.Errorf("unescapeText(%q) = %q, want %q", got, back, tc.in)
		}
	}
}
