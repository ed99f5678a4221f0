package functions

import (
	"math"
	"strconv"
	"strings"

	"github.com/asofsql/asofsql/sqlerr"
)

// to_char of numbers: a port of Postgres 15's NUM_processor
// (formatting.c), C locale: L is a blank, D '.', G ',', S '+'/'-'.

// numKeys are the number template's keywords in Postgres' search order
// (SG and SP before S); matching is case-sensitive, as there.
var numKeys = []string{",", ".", "0", "9", "B", "C", "D", "EEEE", "FM", "G", "L", "MI", "PL", "PR", "RN", "SG", "SP", "S", "TH", "V",
	"b", "c", "d", "eeee", "fm", "g", "l", "mi", "pl", "pr", "rn", "sg", "sp", "s", "th", "v"}

type numNode struct {
	key string // upper-case keyword ("" for a literal), "rn"/"th" kept lower
	lit string
}

type numDesc struct {
	pre, post, multi         int
	zeroStart, zeroEnd       int
	preLsignNum              int
	lsign                    int // 0 none, 1 pre, 2 post
	decimal, zero, fill      bool
	minus, plus, bracket     bool
	lsignSet, roman, eeee, v bool
}

func numSyntax(format string, a ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.SyntaxError, format, a...)
}

// parseNumFormat reads a number template as NUMDesc_prepare does.
func parseNumFormat(f string) ([]numNode, numDesc, error) {
	var nodes []numNode
	var d numDesc
	for i := 0; i < len(f); {
		key := ""
		for _, k := range numKeys {
			if strings.HasPrefix(f[i:], k) {
				key = k
				break
			}
		}
		if key == "" && f[i] == '"' {
			// "quoted text" is copied without its quotes.
			j := strings.IndexByte(f[i+1:], '"')
			if j < 0 {
				j = len(f) - i - 1
			}
			nodes = append(nodes, numNode{lit: f[i+1 : i+1+j]})
			i += j + 2
			continue
		}
		if key == "" {
			j := i + 1
			for j < len(f) && f[j]&0xC0 == 0x80 {
				j++
			}
			nodes = append(nodes, numNode{lit: f[i:j]})
			i = j
			continue
		}
		i += len(key)
		if key != "rn" && key != "th" {
			key = strings.ToUpper(key)
		}
		nodes = append(nodes, numNode{key: key})
		switch key {
		case "9":
			if d.bracket {
				return nil, d, numSyntax("\"9\" must be ahead of \"PR\"")
			}
			if d.v {
				d.multi++
			} else if d.decimal {
				d.post++
			} else {
				d.pre++
			}
		case "0":
			if d.bracket {
				return nil, d, numSyntax("\"0\" must be ahead of \"PR\"")
			}
			if !d.zero && !d.decimal {
				d.zero = true
				d.zeroStart = d.pre + 1
			}
			if !d.decimal {
				d.pre++
			} else {
				d.post++
			}
			d.zeroEnd = d.pre + d.post
		case "D", ".":
			if d.decimal {
				return nil, d, numSyntax("multiple decimal points")
			}
			if d.v {
				return nil, d, numSyntax("cannot use \"V\" and decimal point together")
			}
			d.decimal = true
		case "FM":
			d.fill = true
		case "S":
			if d.lsignSet {
				return nil, d, numSyntax("cannot use \"S\" twice")
			}
			if d.plus || d.minus || d.bracket {
				return nil, d, numSyntax("cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together")
			}
			if !d.decimal {
				d.lsign, d.preLsignNum, d.lsignSet = 1, d.pre, true
			} else if d.lsign == 0 {
				d.lsign, d.lsignSet = 2, true
			}
		case "MI", "PL", "SG":
			if d.lsignSet {
				return nil, d, numSyntax("cannot use \"S\" and \"%s\" together", key)
			}
			d.minus = d.minus || key != "PL"
			d.plus = d.plus || key != "MI"
		case "PR":
			if d.lsignSet || d.plus || d.minus {
				return nil, d, numSyntax("cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together")
			}
			d.bracket = true
		case "RN", "rn":
			d.roman = true
		case "V":
			if d.decimal {
				return nil, d, numSyntax("cannot use \"V\" and decimal point together")
			}
			d.v = true
		case "EEEE":
			if d.eeee {
				return nil, d, numSyntax("cannot use \"EEEE\" twice")
			}
			if d.fill || d.lsignSet || d.bracket || d.minus || d.plus || d.roman || d.v {
				return nil, d, numSyntax("\"EEEE\" is incompatible with other formats").
					WithDetail("\"EEEE\" may only be used together with digit and decimal point patterns.")
			}
			d.eeee = true
		}
	}
	return nodes, d, nil
}

// numValue is a number to format: exactly (a decimal string, for
// integers and numeric) or as a double.
type numValue struct {
	exact   string // optional '-', digits, optional '.' and digits
	isFloat bool
	f       float64
}

// toCharNumber is to_char(number, template).
func toCharNumber(v numValue, format string) (string, error) {
	nodes, d, err := parseNumFormat(format)
	if err != nil {
		return "", err
	}
	var numstr string
	sign := byte('+')
	outPreSpaces := 0
	switch {
	case d.roman:
		var n int64
		if v.isFloat {
			n = int64(math.RoundToEven(v.f))
			if math.IsNaN(v.f) || math.Abs(v.f) > 1e9 {
				n = 0
			}
		} else {
			n = roundExactInt(v.exact)
		}
		numstr = intToRoman(n)
	case d.eeee:
		if v.isFloat {
			if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
				numstr = eeeeHashes(d)
			} else {
				numstr = strconv.FormatFloat(v.f, 'e', d.post, 64)
				if numstr[0] != '-' {
					numstr = " " + numstr
				}
			}
		} else {
			numstr = sciExact(v.exact, d.post)
			if numstr[0] != '-' {
				numstr = " " + numstr
			}
		}
	default:
		var s string
		if v.isFloat {
			val := v.f
			if d.v {
				val *= math.Pow(10, float64(d.multi))
				d.pre += d.multi
			}
			preLen := len(cFloat(math.Abs(val), 0))
			if preLen >= 15 { // DBL_DIG
				d.post = 0
			} else if preLen+d.post > 15 {
				d.post = 15 - preLen
			}
			s = cFloat(val, d.post)
		} else {
			x := v.exact
			if d.v {
				x = shiftDecimal(x, d.multi)
				d.pre += d.multi
			}
			s = roundExact(x, d.post)
		}
		if s[0] == '-' {
			sign, s = '-', s[1:]
		}
		preLen := len(s)
		if p := strings.IndexByte(s, '.'); p >= 0 {
			preLen = p
		}
		numstr = s
		if preLen < d.pre {
			outPreSpaces = d.pre - preLen
		} else if preLen > d.pre {
			b := []byte(strings.Repeat("#", d.pre+d.post+1))
			b[d.pre] = '.'
			numstr = string(b)
		}
	}
	if d.eeee {
		return numstr, nil
	}
	return numProcess(nodes, d, numstr, sign, outPreSpaces)
}

func eeeeHashes(d numDesc) string {
	b := []byte(strings.Repeat("#", d.pre+d.post+6))
	b[0], b[d.pre+1] = ' ', '.'
	return string(b)
}

// numProcess is NUM_processor's to_char direction.
func numProcess(nodes []numNode, d numDesc, number string, sign byte, outPreSpaces int) (string, error) {
	if d.roman {
		fill := d.fill
		d = numDesc{roman: true, fill: fill}
		outPreSpaces, sign = 0, 0
	}
	signWrote := false
	if d.plus || d.minus {
		signWrote = !(d.plus && !d.minus)
	} else {
		if sign != '-' && d.fill {
			d.bracket = false
		}
		signWrote = sign == '+' && d.fill && !d.lsignSet
		if d.lsign == 1 && d.pre == d.preLsignNum {
			d.lsign = 2
		}
	}
	if d.zeroStart > 0 { // 1-based in the template, 0-based from here
		d.zeroStart--
	}
	numCount := d.post + d.pre - 1
	lastRelevant := -1 // index into number
	if d.fill && d.decimal {
		if p := strings.IndexByte(number, '.'); p >= 0 {
			lastRelevant = p
			for q := p + 1; q < len(number); q++ {
				if number[q] != '0' {
					lastRelevant = q
				}
			}
		}
		if lastRelevant >= 0 && d.zeroEnd > outPreSpaces {
			lz := min(len(number)-1, d.zeroEnd-outPreSpaces)
			if lastRelevant < lz {
				lastRelevant = lz
			}
		}
	}
	if !signWrote && outPreSpaces == 0 {
		numCount++
	}
	numIn := false
	numCurr := 0
	np := 0 // position in number
	var out strings.Builder
	at := func(i int) byte {
		if i < len(number) {
			return number[i]
		}
		return 0
	}
	lastIsDot := lastRelevant >= 0 && at(lastRelevant) == '.'
	predecSpace := func() bool {
		return !d.zero && np == 0 && len(number) > 0 && number[0] == '0' && d.post != 0
	}
	numpart := func(id string) {
		if d.roman {
			return
		}
		if !signWrote && (numCurr >= outPreSpaces || d.zero && d.zeroStart == numCurr) && (!predecSpace() || lastIsDot) {
			switch {
			case d.lsignSet:
				if d.lsign == 1 {
					out.WriteByte(sign)
					signWrote = true
				}
			case d.bracket:
				if sign == '+' {
					out.WriteByte(' ')
				} else {
					out.WriteByte('<')
				}
				signWrote = true
			case sign == '+':
				if !d.fill {
					out.WriteByte(' ')
				}
				signWrote = true
			case sign == '-':
				out.WriteByte('-')
				signWrote = true
			}
		}
		switch {
		case numCurr < outPreSpaces && (d.zeroStart > numCurr || !d.zero):
			if !d.fill {
				out.WriteByte(' ')
			}
		case d.zero && numCurr < outPreSpaces && d.zeroStart <= numCurr:
			out.WriteByte('0')
			numIn = true
		default:
			if at(np) == '.' {
				if !lastIsDot || d.fill {
					out.WriteByte('.')
				}
			} else {
				switch {
				case lastRelevant >= 0 && np > lastRelevant && id != "0":
				case predecSpace():
					if !d.fill {
						out.WriteByte(' ')
					} else if lastIsDot {
						out.WriteByte('0')
					}
				default:
					if c := at(np); c != 0 {
						out.WriteByte(c)
					}
					numIn = true
				}
			}
			if np < len(number) {
				np++
			}
		}
		end := numCount
		if outPreSpaces > 0 {
			end++
		}
		if d.decimal {
			end++
		}
		if lastRelevant >= 0 && lastRelevant == np {
			end = numCurr
		}
		if numCurr+1 == end {
			if signWrote && d.bracket {
				if sign == '+' {
					out.WriteByte(' ')
				} else {
					out.WriteByte('>')
				}
			} else if d.lsignSet && d.lsign == 2 {
				out.WriteByte(sign)
			}
		}
		numCurr++
	}
	for _, n := range nodes {
		if n.key == "" {
			out.WriteString(n.lit)
			continue
		}
		switch n.key {
		case "9", "0", ".", "D":
			numpart(n.key)
		case ",", "G":
			if !numIn {
				if !d.fill {
					out.WriteByte(' ')
				}
			} else {
				out.WriteByte(',')
			}
		case "L":
			out.WriteByte(' ')
		case "RN", "rn":
			r := number
			if n.key == "rn" {
				r = strings.ToLower(r)
			}
			if !d.fill && len(r) < 15 {
				r = strings.Repeat(" ", 15-len(r)) + r
			}
			out.WriteString(r)
		case "TH", "th":
			if d.roman || strings.HasPrefix(number, "#") || sign == '-' || d.decimal {
				continue
			}
			last := number[len(number)-1]
			if last < '0' || last > '9' {
				return "", sqlerr.New(sqlerr.InvalidParameterValue, "\"%s\" is not a number", number)
			}
			suf := "th"
			if !(len(number) > 1 && number[len(number)-2] == '1') {
				suf = map[byte]string{'1': "st", '2': "nd", '3': "rd"}[last]
				if suf == "" {
					suf = "th"
				}
			}
			if n.key == "TH" {
				suf = strings.ToUpper(suf)
			}
			out.WriteString(suf)
		case "MI":
			if sign == '-' {
				out.WriteByte('-')
			} else if !d.fill {
				out.WriteByte(' ')
			}
		case "PL":
			if sign == '+' {
				out.WriteByte('+')
			} else if !d.fill {
				out.WriteByte(' ')
			}
		case "SG":
			out.WriteByte(sign)
		}
	}
	return out.String(), nil
}

// roundExact rounds a decimal string to post fraction digits, half away
// from zero, padding with zeros (numeric_round, then numeric_out).
func roundExact(s string, post int) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	if len(fp) < post {
		fp += strings.Repeat("0", post-len(fp))
	}
	digits := []byte(ip + fp[:post])
	if len(fp) > post && fp[post] >= '5' {
		i := len(digits) - 1
		for ; i >= 0; i-- {
			if digits[i] == '9' {
				digits[i] = '0'
				continue
			}
			digits[i]++
			break
		}
		if i < 0 {
			digits = append([]byte{'1'}, digits...)
		}
	}
	ipLen := len(digits) - post
	r := strings.TrimLeft(string(digits[:ipLen]), "0")
	if r == "" {
		r = "0"
	}
	if post > 0 {
		r += "." + string(digits[ipLen:])
	}
	if neg && strings.Trim(r, "0.") != "" {
		r = "-" + r
	}
	return r
}

func roundExactInt(s string) int64 {
	n, err := strconv.ParseInt(roundExact(s, 0), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// shiftDecimal multiplies a decimal string by 10^k.
func shiftDecimal(s string, k int) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	if len(fp) < k {
		fp += strings.Repeat("0", k-len(fp))
	}
	r := ip + fp[:k]
	if len(fp) > k {
		r += "." + fp[k:]
	}
	if neg {
		r = "-" + r
	}
	return r
}

// sciExact is numeric_out_sci: d.ddde±XX with post fraction digits.
func sciExact(s string, post int) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	ip, fp, _ := strings.Cut(s, ".")
	all := ip + fp
	first := strings.IndexFunc(all, func(r rune) bool { return r != '0' })
	exp := 0
	if first >= 0 {
		exp = len(ip) - first - 1
		all = all[first:]
	} else {
		all = "0"
	}
	m := roundExact(all[:1]+"."+all[1:], post)
	// A mantissa rounded up to 10 stays so (" 10.0e+00" for 9.99 with
	// 9.9EEEE), as Postgres' numeric_out_sci writes it.
	es := strconv.Itoa(abs(exp))
	if len(es) < 2 {
		es = "0" + es
	}
	r := m + "e"
	if exp < 0 {
		r += "-"
	} else {
		r += "+"
	}
	r += es
	if neg && first >= 0 {
		r = "-" + r
	}
	return r
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// intToRoman is Postgres' int_to_roman: 15 '#'s outside 1..3999.
func intToRoman(n int64) string {
	if n < 1 || n > 3999 {
		return strings.Repeat("#", 15)
	}
	vals := []int64{1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1}
	syms := []string{"M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"}
	var b strings.Builder
	for i, v := range vals {
		for n >= v {
			b.WriteString(syms[i])
			n -= v
		}
	}
	return b.String()
}

// cFloat is Postgres' snprintf("%.*f"): NaN, Infinity, -Infinity.
func cFloat(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}
