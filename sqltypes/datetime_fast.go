package sqltypes

// fastDateTime reads the canonical forms that COPY and drivers send
// almost always, "YYYY-MM-DD[( |T)HH:MM:SS[.ffffff]][Z|±HH[:MM]]", without
// allocating. It reports ok=false for anything else (including values it
// would have to reject), leaving those to the general parser, and never
// accepts what that parser would read differently.
func fastDateTime(s string) (days, tod, off int64, hasTime, hasOff, ok bool) {
	n := len(s)
	if n < 10 || s[4] != '-' || s[7] != '-' {
		return
	}
	y, ok1 := digits(s, 0, 4)
	m, ok2 := digits(s, 5, 2)
	d, ok3 := digits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || y == 0 || m < 1 || m > 12 || d < 1 || d > monthDays(y, m) {
		return
	}
	days = date2j(y, m, d) - unixEpochJD
	i := 10
	if i < n && (s[i] == ' ' || s[i] == 'T') {
		if n < i+9 || s[i+3] != ':' || s[i+6] != ':' {
			return
		}
		h, ok1 := digits(s, i+1, 2)
		mi, ok2 := digits(s, i+4, 2)
		sec, ok3 := digits(s, i+7, 2)
		if !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || sec > 59 {
			return
		}
		tod = h*usPerHour + mi*usPerMinute + sec*usPerSec
		hasTime = true
		i += 9
		if i < n && s[i] == '.' {
			i++
			frac, scale := int64(0), usPerSec
			for k := 0; k < 6 && i < n && isDigitB(s[i]); k++ {
				scale /= 10
				frac += int64(s[i]-'0') * scale
				i++
			}
			if i < n && isDigitB(s[i]) {
				return // more than 6 digits round like strtod; not here
			}
			tod += frac
		}
	}
	if i < n {
		switch c := s[i]; {
		case c == 'Z' && i+1 == n && hasTime:
			hasOff = true
		case (c == '+' || c == '-') && hasTime:
			if n != i+3 && !(n == i+6 && s[i+3] == ':') {
				return
			}
			oh, ok1 := digits(s, i+1, 2)
			om := int64(0)
			ok2 := true
			if n == i+6 {
				om, ok2 = digits(s, i+4, 2)
			}
			if !ok1 || !ok2 || oh > 15 || om > 59 {
				return
			}
			off = oh*3600 + om*60
			if c == '-' {
				off = -off
			}
			hasOff = true
		default:
			return
		}
	}
	ok = true
	return
}

// digits reads n decimal digits at s[i:].
func digits(s string, i, n int) (int64, bool) {
	var v int64
	for k := i; k < i+n; k++ {
		c := s[k]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}
