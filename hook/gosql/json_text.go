package outboxsql

// The JSON text the C++ hook writes (core/json_writer.h, core/envelope_codec.h): what
// nlohmann::json::dump() writes after parsing, compact, keys sorted by bytes, ensure_ascii off.
// The rows this package writes carry byte for byte the envelope the hook writes for the same
// command, so IM receives the same Data whichever producer wrote the row.

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendJSONString appends s as dump() writes a string: quoted; the quote, the backslash and the
// bytes below 0x20 escaped (\b \t \n \f \r, the others \u00xx); everything else as it is. s must
// be valid UTF-8 (the callers check).
func appendJSONString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			out = append(out, '\\', '"')
		case '\\':
			out = append(out, '\\', '\\')
		case '\b':
			out = append(out, '\\', 'b')
		case '\t':
			out = append(out, '\\', 't')
		case '\n':
			out = append(out, '\\', 'n')
		case '\f':
			out = append(out, '\\', 'f')
		case '\r':
			out = append(out, '\\', 'r')
		default:
			if c < 0x20 {
				out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			} else {
				out = append(out, c)
			}
		}
	}
	return append(out, '"')
}

// jsonNestingDepth is core::JsonNestingDepth: the deepest nesting of arrays and objects in text,
// brackets inside strings not counted, stopping once it passes stopAbove. Any bytes; no
// validation.
func jsonNestingDepth(text string, stopAbove int) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > stopAbove {
					return deepest
				}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return deepest
}

var errNotObject = errors.New("not a JSON object")

const utf8BOM = "\xef\xbb\xbf"

// canonicalObject is dump() of the parse of text, which must be one JSON object (nlohmann's
// parser: RFC 8259, strict UTF-8, paired surrogate escapes, a leading byte order mark skipped,
// a repeated key's last value kept, numbers out of double's range refused).
func canonicalObject(text string) ([]byte, error) {
	text = strings.TrimPrefix(text, utf8BOM)
	if !utf8.ValidString(text) || !json.Valid([]byte(text)) || !surrogatesPaired(text) {
		return nil, errNotObject
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var value interface{}
	if err := dec.Decode(&value); err != nil {
		return nil, errNotObject
	}
	if _, ok := value.(map[string]interface{}); !ok {
		return nil, errNotObject
	}
	return appendJSONValue(make([]byte, 0, len(text)), value)
}

func appendJSONValue(out []byte, value interface{}) ([]byte, error) {
	switch v := value.(type) {
	case nil:
		return append(out, "null"...), nil
	case bool:
		return strconv.AppendBool(out, v), nil
	case string:
		return appendJSONString(out, v), nil
	case json.Number:
		return appendJSONNumber(out, string(v))
	case []interface{}:
		out = append(out, '[')
		for i, e := range v {
			if i > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = appendJSONValue(out, e); err != nil {
				return nil, err
			}
		}
		return append(out, ']'), nil
	case map[string]interface{}:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // bytewise, as std::string compares
		out = append(out, '{')
		for i, k := range keys {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(appendJSONString(out, k), ':')
			var err error
			if out, err = appendJSONValue(out, v[k]); err != nil {
				return nil, err
			}
		}
		return append(out, '}'), nil
	}
	return nil, errNotObject
}

// appendJSONNumber writes a number token as nlohmann reads and dump() writes it: an integer
// token that fits int64 or uint64 as that integer, anything else as a double.
func appendJSONNumber(out []byte, token string) ([]byte, error) {
	if !strings.ContainsAny(token, ".eE") {
		if i, err := strconv.ParseInt(token, 10, 64); err == nil {
			return strconv.AppendInt(out, i, 10), nil
		}
		if token[0] != '-' {
			if u, err := strconv.ParseUint(token, 10, 64); err == nil {
				return strconv.AppendUint(out, u, 10), nil
			}
		}
	}
	f, err := strconv.ParseFloat(token, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, errNotObject // nlohmann: "number overflow"
	}
	return appendDouble(out, f), nil
}

// appendDouble writes f as nlohmann's to_chars does: the shortest digits that read back as f,
// then format_buffer's layout with min_exp -4 and max_exp 15: "100.0", "1.5", "0.0001",
// "1e+16", "1.5e-05".
func appendDouble(out []byte, f float64) []byte {
	if math.Signbit(f) {
		out = append(out, '-')
		f = -f
	}
	if f == 0 {
		return append(out, "0.0"...)
	}
	e := strconv.AppendFloat(nil, f, 'e', -1, 64) // d[.ddd]e±XX
	at := bytes.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(string(e[at+1:]))
	digits := make([]byte, 0, at)
	for _, c := range e[:at] {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	k := len(digits)
	n := exp + 1 // the decimal point's place after the first n digits
	const minExp, maxExp = -4, 15
	switch {
	case k <= n && n <= maxExp:
		out = append(out, digits...)
		out = append(out, bytes.Repeat([]byte{'0'}, n-k)...)
		return append(out, '.', '0')
	case 0 < n && n <= maxExp:
		out = append(out, digits[:n]...)
		out = append(out, '.')
		return append(out, digits[n:]...)
	case minExp < n && n <= 0:
		out = append(out, '0', '.')
		out = append(out, bytes.Repeat([]byte{'0'}, -n)...)
		return append(out, digits...)
	}
	out = append(out, digits[0])
	if k > 1 {
		out = append(out, '.')
		out = append(out, digits[1:]...)
	}
	out = append(out, 'e')
	x := n - 1
	if x < 0 {
		out = append(out, '-')
		x = -x
	} else {
		out = append(out, '+')
	}
	if x < 10 {
		out = append(out, '0')
	}
	return strconv.AppendInt(out, int64(x), 10)
}

// surrogatesPaired reports whether every \u escape of a surrogate in text (valid JSON) is a high
// surrogate followed by a \u escape of a low one, as nlohmann requires (encoding/json would
// put U+FFFD in place of a lone one).
func surrogatesPaired(text string) bool {
	inString := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !inString {
			inString = c == '"'
			continue
		}
		if c == '"' {
			inString = false
			continue
		}
		if c != '\\' {
			continue
		}
		i++
		if text[i] != 'u' {
			continue
		}
		r := hex4(text[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(text) || text[i+1] != '\\' || text[i+2] != 'u' {
				return false
			}
			if low := hex4(text[i+3 : i+7]); low < 0xDC00 || low > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

func hex4(s string) int {
	v, _ := strconv.ParseUint(s, 16, 32)
	return int(v)
}
