package npy

import (
	"fmt"
	"strconv"
	"strings"
)

// header is the dictionary at the start of a .npy file.
type header struct {
	descr   string // the dtype, as '<f4'
	fortran bool   // the data is in column-major order
	shape   []int
}

// format renders h as NumPy writes it: a Python dict literal with the keys
// in this order and a trailing comma, 'shape' a tuple.
func (h header) format() string {
	dims := make([]string, len(h.shape))
	for i, d := range h.shape {
		dims[i] = strconv.Itoa(d)
	}
	shape := "(" + strings.Join(dims, ", ") + ")"
	if len(dims) == 1 {
		shape = "(" + dims[0] + ",)"
	}
	order := "False"
	if h.fortran {
		order = "True"
	}
	return fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", h.descr, order, shape)
}

// parseHeader reads the dict literal of a .npy header: the keys descr,
// fortran_order and shape, each exactly once, and no others.
func parseHeader(s string) (header, error) {
	p := &literal{s: strings.TrimRight(s, " \n\x00")}
	v, err := p.value()
	if err != nil {
		return header{}, err
	}
	p.space()
	if p.i != len(p.s) {
		return header{}, fmt.Errorf("header has %q after its dictionary", p.s[p.i:])
	}
	d, ok := v.(map[string]any)
	if !ok {
		return header{}, fmt.Errorf("header is not a dictionary: %q", s)
	}
	var h header
	for k, v := range d {
		switch k {
		case "descr":
			s, ok := v.(string)
			if !ok {
				return header{}, fmt.Errorf("descr %v is a structured dtype, which has no array form", v)
			}
			h.descr = s
		case "fortran_order":
			b, ok := v.(bool)
			if !ok {
				return header{}, fmt.Errorf("fortran_order %v is not True or False", v)
			}
			h.fortran = b
		case "shape":
			t, ok := v.([]any)
			if !ok {
				return header{}, fmt.Errorf("shape %v is not a tuple", v)
			}
			for _, e := range t {
				n, ok := e.(int)
				if !ok || n < 0 {
					return header{}, fmt.Errorf("shape %v has a dimension that is not a non-negative integer", v)
				}
				h.shape = append(h.shape, n)
			}
		default:
			return header{}, fmt.Errorf("header has an unknown key %q", k)
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if _, ok := d[k]; !ok {
			return header{}, fmt.Errorf("header has no %q", k)
		}
	}
	return h, nil
}

// literal parses the subset of Python literals a .npy header uses: dicts,
// tuples and lists, quoted strings, integers, True, False and None.
type literal struct {
	s string
	i int
}

// maxDepth bounds the nesting of a header's literals.
const maxDepth = 32

func (p *literal) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *literal) errorf(format string, args ...any) error {
	return fmt.Errorf("header %q, at byte %d: %s", p.s, p.i, fmt.Sprintf(format, args...))
}

// value parses one literal.
func (p *literal) value() (any, error) { return p.nested(0) }

func (p *literal) nested(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested too deeply")
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, p.errorf("ends early")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict(depth)
	case c == '(' || c == '[':
		return p.sequence(depth)
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		j := p.i + 1
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j < len(p.s) && p.s[j] == 'L' { // Python 2's long integers
			j++
		}
		n, err := strconv.Atoi(strings.TrimSuffix(p.s[p.i:j], "L"))
		if err != nil {
			return nil, p.errorf("bad integer %q", p.s[p.i:j])
		}
		p.i = j
		return n, nil
	}
	for word, v := range map[string]any{"True": true, "False": false, "None": nil} {
		if strings.HasPrefix(p.s[p.i:], word) {
			p.i += len(word)
			return v, nil
		}
	}
	return nil, p.errorf("unexpected %q", p.s[p.i])
}

func (p *literal) str() (string, error) {
	q := p.s[p.i]
	j := strings.IndexByte(p.s[p.i+1:], q)
	if j < 0 {
		return "", p.errorf("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+j]
	if strings.ContainsRune(v, '\\') {
		return "", p.errorf("escapes in strings are not supported")
	}
	p.i += j + 2
	return v, nil
}

func (p *literal) sequence(depth int) ([]any, error) {
	end := byte(')')
	if p.s[p.i] == '[' {
		end = ']'
	}
	p.i++
	out := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return out, nil
		}
		v, err := p.nested(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return out, nil
		}
		return nil, p.errorf("expected ',' or %q", end)
	}
}

func (p *literal) dict(depth int) (map[string]any, error) {
	p.i++
	out := map[string]any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, nil
		}
		if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
			return nil, p.errorf("expected a quoted key")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := out[k]; dup {
			return nil, p.errorf("key %q twice", k)
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.errorf("expected ':' after key %q", k)
		}
		p.i++
		v, err := p.nested(depth + 1)
		if err != nil {
			return nil, err
		}
		out[k] = v
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, nil
		}
		return nil, p.errorf("expected ',' or '}'")
	}
}
