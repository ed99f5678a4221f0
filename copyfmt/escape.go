package copyfmt

// AppendText appends v as one field of COPY's text format (Postgres'
// CopyAttributeOutText): backslash, the delimiter and the control
// characters \b \f \n \r \t \v are escaped, so that the reader's
// unescaping gives v back. NULL is not a value here: the caller writes
// its NULL string instead.
func AppendText(dst, v []byte, delim byte) []byte {
	for _, c := range v {
		if c < 0x20 {
			var esc byte
			switch c {
			case '\b':
				esc = 'b'
			case '\f':
				esc = 'f'
			case '\n':
				esc = 'n'
			case '\r':
				esc = 'r'
			case '\t':
				esc = 't'
			case '\v':
				esc = 'v'
			default:
				if c == delim {
					esc = c
				}
			}
			if esc != 0 {
				dst = append(dst, '\\', esc)
				continue
			}
		} else if c == '\\' || c == delim {
			dst = append(dst, '\\')
		}
		dst = append(dst, c)
	}
	return dst
}
