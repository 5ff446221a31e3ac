package pytorch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Dict is a Python dict (or OrderedDict) read from a file, its entries in
// the file's order. Keys are strings, int64s, Tuples or other read values.
type Dict struct {
	Keys, Values []any
	index        map[any]int // the position of each string, int64, float64, bool or nil key
}

// Get returns the value of a string key.
func (d *Dict) Get(key string) (any, bool) {
	if d.index != nil {
		if i, ok := d.index[key]; ok {
			return d.Values[i], true
		}
		return nil, false
	}
	for i, k := range d.Keys {
		if s, ok := k.(string); ok && s == key {
			return d.Values[i], true
		}
	}
	return nil, false
}

// set adds or replaces an entry, in constant time for the key types a
// dict's keys have in practice.
func (d *Dict) set(k, v any) {
	switch k.(type) {
	case string, int64, float64, bool, nil:
		if d.index == nil {
			d.index = map[any]int{}
			for i, old := range d.Keys {
				switch old.(type) {
				case string, int64, float64, bool, nil:
					d.index[old] = i
				}
			}
		}
		if i, ok := d.index[k]; ok {
			d.Values[i] = v
			return
		}
		d.index[k] = len(d.Keys)
	}
	d.Keys = append(d.Keys, k)
	d.Values = append(d.Values, v)
}

// List is a Python list read from a file.
type List struct{ Items []any }

// Tuple is a Python tuple read from a file.
type Tuple []any

// Object is a Python object of a class this package does not build: its
// class, the arguments its pickle would call the class with and the state
// it would set, kept as data. Nothing from a file is ever run.
type Object struct {
	Module, Name string
	Args         []any
	State        any
	// Items are the values a list subclass's pickle appends, Entries
	// those a dict subclass's sets (a defaultdict, a config dict).
	Items   []any
	Entries *Dict
}

// Global is a Python name (a class, function or constant such as
// torch.float32) read from a file and not called.
type Global struct{ Module, Name string }

// unpickler reads the pickle protocols 0 to 5, building values of the
// types above. Every global name is only data: calls (REDUCE, NEWOBJ) of
// names it knows (the torch tensor rebuilders, OrderedDict) build values,
// the others become Objects.
type unpickler struct {
	data  []byte
	pos   int
	stack []any
	marks []int
	memo  map[int]any
	// reduce builds the value of calling g with args; ok false leaves it
	// to the default (an Object).
	reduce func(g Global, args []any) (v any, ok bool, err error)
	// persistentLoad resolves a persistent id.
	persistentLoad func(id any) (any, error)
}

// errTruncated is the error of a pickle that ends early.
var errTruncated = errors.New("the pickle ends early")

func (u *unpickler) read(n int) ([]byte, error) {
	if n < 0 || n > len(u.data)-u.pos {
		return nil, errTruncated
	}
	b := u.data[u.pos : u.pos+n]
	u.pos += n
	return b, nil
}

func (u *unpickler) line() (string, error) {
	i := bytes.IndexByte(u.data[u.pos:], '\n')
	if i < 0 {
		return "", errTruncated
	}
	s := string(u.data[u.pos : u.pos+i])
	u.pos += i + 1
	return strings.TrimSuffix(s, "\r"), nil
}

func (u *unpickler) uint(n int) (int, error) {
	b, err := u.read(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if v > math.MaxInt32*2 && n == 8 && v > uint64(len(u.data)) {
		return 0, errTruncated // a length no pickle in memory can have
	}
	return int(v), nil
}

func (u *unpickler) push(v any) { u.stack = append(u.stack, v) }

// avail is the number of values above the last mark.
func (u *unpickler) avail() int {
	if len(u.marks) == 0 {
		return len(u.stack)
	}
	return len(u.stack) - u.marks[len(u.marks)-1]
}

func (u *unpickler) pop() (any, error) {
	if u.avail() <= 0 {
		return nil, errors.New("the pickle pops an empty stack")
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	return v, nil
}

func (u *unpickler) top() (any, error) {
	if len(u.stack) == 0 {
		return nil, errors.New("the pickle reads an empty stack")
	}
	return u.stack[len(u.stack)-1], nil
}

// popMark pops the values above the last mark.
func (u *unpickler) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, errors.New("the pickle has no mark to pop to")
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	if m > len(u.stack) {
		return nil, errors.New("the pickle's stack fell below its mark")
	}
	items := append([]any(nil), u.stack[m:]...)
	u.stack = u.stack[:m]
	return items, nil
}

// maxMemo bounds the memo indices a pickle may use.
const maxMemo = 1 << 24

func (u *unpickler) put(i int) error {
	if i < 0 || i > maxMemo {
		return fmt.Errorf("memo index %d out of range", i)
	}
	v, err := u.top()
	if err != nil {
		return err
	}
	u.memo[i] = v
	return nil
}

func (u *unpickler) get(i int) error {
	v, ok := u.memo[i]
	if !ok {
		return fmt.Errorf("memo index %d was never stored", i)
	}
	u.push(v)
	return nil
}

// run unpickles one value.
func (u *unpickler) run() (any, error) {
	u.memo = map[int]any{}
	for {
		if u.pos >= len(u.data) {
			return nil, errTruncated
		}
		op := u.data[u.pos]
		u.pos++
		done, err := u.step(op)
		if err != nil {
			return nil, fmt.Errorf("pickle opcode %q at byte %d: %w", op, u.pos-1, err)
		}
		if done {
			if len(u.stack) != 1 || len(u.marks) != 0 {
				return nil, fmt.Errorf("the pickle stops with %d values on its stack", len(u.stack))
			}
			return u.stack[0], nil
		}
	}
}

// step runs one opcode; done is true at STOP.
func (u *unpickler) step(op byte) (done bool, err error) {
	switch op {
	case '.': // STOP
		return true, nil
	case 0x80: // PROTO
		b, err := u.read(1)
		if err == nil && b[0] > 5 {
			err = fmt.Errorf("pickle protocol %d is newer than 5", b[0])
		}
		return false, err
	case 0x95: // FRAME
		_, err := u.read(8)
		return false, err
	case '(': // MARK
		u.marks = append(u.marks, len(u.stack))
	case '0': // POP
		_, err = u.pop()
	case '1': // POP_MARK
		_, err = u.popMark()
	case '2': // DUP
		var v any
		if v, err = u.top(); err == nil {
			u.push(v)
		}
	case 'N':
		u.push(nil)
	case 0x88:
		u.push(true)
	case 0x89:
		u.push(false)
	case 'J', 'K', 'M': // BININT, BININT1, BININT2
		n := map[byte]int{'J': 4, 'K': 1, 'M': 2}[op]
		var v int
		if v, err = u.uint(n); err == nil {
			if op == 'J' {
				v = int(int32(uint32(v)))
			}
			u.push(int64(v))
		}
	case 0x8a, 0x8b: // LONG1, LONG4
		err = u.long(map[byte]int{0x8a: 1, 0x8b: 4}[op])
	case 'I', 'L': // INT, LONG (text)
		var s string
		if s, err = u.line(); err == nil {
			err = u.textInt(s)
		}
	case 'G': // BINFLOAT
		var b []byte
		if b, err = u.read(8); err == nil {
			u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
		}
	case 'F': // FLOAT (text)
		var s string
		if s, err = u.line(); err == nil {
			var f float64
			if f, err = strconv.ParseFloat(s, 64); err == nil {
				u.push(f)
			}
		}
	case 'X', 0x8c, 0x8d, 'T', 'U', 'B', 'C', 0x8e, 0x96: // strings and bytes with lengths
		err = u.sized(op)
	case 'S', 'V': // STRING, UNICODE (text)
		var s string
		if s, err = u.line(); err == nil {
			if op == 'S' {
				s, err = strconv.Unquote(`"` + strings.Trim(s, `'"`) + `"`)
			}
			u.push(s)
		}
	case ')':
		u.push(Tuple{})
	case ']':
		u.push(&List{})
	case '}':
		u.push(&Dict{})
	case 0x8f: // EMPTY_SET
		u.push(&List{})
	case 't', 'l', 'd', 0x91: // TUPLE, LIST, DICT, FROZENSET
		var items []any
		if items, err = u.popMark(); err != nil {
			return false, err
		}
		switch op {
		case 't':
			u.push(Tuple(items))
		case 'l':
			u.push(&List{Items: items})
		case 0x91:
			u.push(Tuple(items))
		case 'd':
			if len(items)%2 != 0 {
				return false, errors.New("DICT with an odd number of items")
			}
			d := &Dict{}
			for i := 0; i < len(items); i += 2 {
				d.set(items[i], items[i+1])
			}
			u.push(d)
		}
	case 0x85, 0x86, 0x87: // TUPLE1..3
		n := int(op - 0x84)
		if u.avail() < n {
			return false, errors.New("a short stack")
		}
		t := append(Tuple(nil), u.stack[len(u.stack)-n:]...)
		u.stack = u.stack[:len(u.stack)-n]
		u.push(t)
	case 'a', 'e', 0x90: // APPEND, APPENDS, ADDITEMS
		err = u.appendItems(op)
	case 's', 'u': // SETITEM, SETITEMS
		err = u.setItems(op)
	case 'c', 0x93: // GLOBAL, STACK_GLOBAL
		err = u.global(op)
	case 'R', 0x81, 0x92: // REDUCE, NEWOBJ, NEWOBJ_EX
		err = u.call(op)
	case 'b': // BUILD
		err = u.build()
	case 'p', 'q', 'r', 0x94: // PUT, BINPUT, LONG_BINPUT, MEMOIZE
		i := len(u.memo) // MEMOIZE: the next index
		if op != 0x94 {
			i, err = u.memoIndex(op == 'p', op == 'q')
		}
		if err == nil {
			err = u.put(i)
		}
	case 'g', 'h', 'j': // GET, BINGET, LONG_BINGET
		var i int
		if i, err = u.memoIndex(op == 'g', op == 'h'); err == nil {
			err = u.get(i)
		}
	case 'Q', 'P': // BINPERSID, PERSID
		var id any
		if op == 'Q' {
			id, err = u.pop()
		} else {
			id, err = u.line()
		}
		if err == nil {
			var v any
			if v, err = u.persistentLoad(id); err == nil {
				u.push(v)
			}
		}
	default:
		return false, errors.New("not supported")
	}
	return false, err
}

// memoIndex reads a memo index: a text line (PUT, GET), one byte
// (BINPUT, BINGET) or four (LONG_BINPUT, LONG_BINGET).
func (u *unpickler) memoIndex(text, short bool) (int, error) {
	switch {
	case text:
		s, err := u.line()
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(s)
	case short:
		return u.uint(1)
	}
	return u.uint(4)
}

func (u *unpickler) long(lenSize int) error {
	n, err := u.uint(lenSize)
	if err != nil {
		return err
	}
	b, err := u.read(n)
	if err != nil {
		return err
	}
	if n <= 8 {
		var v uint64
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		if n > 0 && n < 8 && b[n-1]&0x80 != 0 { // sign-extend
			v |= ^uint64(0) << (8 * n)
		}
		u.push(int64(v))
		return nil
	}
	be := make([]byte, n) // two's complement, little-endian, to big.Int
	for i := range b {
		be[n-1-i] = b[i]
	}
	v := new(big.Int).SetBytes(be)
	if b[n-1]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	u.push(v)
	return nil
}

func (u *unpickler) textInt(s string) error {
	s = strings.TrimSuffix(s, "L")
	switch s {
	case "00":
		u.push(false)
		return nil
	case "01":
		u.push(true)
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		u.push(v)
		return nil
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return fmt.Errorf("bad integer %q", s)
	}
	u.push(v)
	return nil
}

// sized reads a string or bytes value with a length prefix.
func (u *unpickler) sized(op byte) error {
	lenSize := map[byte]int{'X': 4, 0x8c: 1, 0x8d: 8, 'T': 4, 'U': 1, 'B': 4, 'C': 1, 0x8e: 8, 0x96: 8}[op]
	n, err := u.uint(lenSize)
	if err != nil {
		return err
	}
	b, err := u.read(n)
	if err != nil {
		return err
	}
	switch op {
	case 'B', 'C', 0x8e, 0x96:
		u.push(append([]byte(nil), b...))
	default:
		u.push(string(b))
	}
	return nil
}

func (u *unpickler) appendItems(op byte) error {
	var items []any
	if op == 'a' {
		v, err := u.pop()
		if err != nil {
			return err
		}
		items = []any{v}
	} else {
		var err error
		if items, err = u.popMark(); err != nil {
			return err
		}
	}
	t, err := u.top()
	if err != nil {
		return err
	}
	switch l := t.(type) {
	case *List:
		l.Items = append(l.Items, items...)
	case *Object: // a list subclass
		l.Items = append(l.Items, items...)
	default:
		return fmt.Errorf("appends to a %T, not a list", t)
	}
	return nil
}

func (u *unpickler) setItems(op byte) error {
	var items []any
	if op == 's' {
		v, err := u.pop()
		if err != nil {
			return err
		}
		k, err := u.pop()
		if err != nil {
			return err
		}
		items = []any{k, v}
	} else {
		var err error
		if items, err = u.popMark(); err != nil {
			return err
		}
	}
	if len(items)%2 != 0 {
		return errors.New("an odd number of items to set")
	}
	t, err := u.top()
	if err != nil {
		return err
	}
	var d *Dict
	switch x := t.(type) {
	case *Dict:
		d = x
	case *Object: // a dict subclass
		if x.Entries == nil {
			x.Entries = &Dict{}
		}
		d = x.Entries
	default:
		return fmt.Errorf("sets items of a %T, not a dict", t)
	}
	for i := 0; i < len(items); i += 2 {
		d.set(items[i], items[i+1])
	}
	return nil
}

func (u *unpickler) global(op byte) error {
	var module, name string
	if op == 'c' {
		var err error
		if module, err = u.line(); err != nil {
			return err
		}
		if name, err = u.line(); err != nil {
			return err
		}
	} else {
		n, err := u.pop()
		if err != nil {
			return err
		}
		m, err := u.pop()
		if err != nil {
			return err
		}
		var ok1, ok2 bool
		module, ok1 = m.(string)
		name, ok2 = n.(string)
		if !ok1 || !ok2 {
			return errors.New("STACK_GLOBAL of values that are not strings")
		}
	}
	u.push(Global{module, name})
	return nil
}

func (u *unpickler) call(op byte) error {
	var kwargs any
	if op == 0x92 {
		var err error
		if kwargs, err = u.pop(); err != nil {
			return err
		}
	}
	a, err := u.pop()
	if err != nil {
		return err
	}
	f, err := u.pop()
	if err != nil {
		return err
	}
	args, ok := a.(Tuple)
	if !ok {
		return fmt.Errorf("calls with %T arguments, not a tuple", a)
	}
	g, ok := f.(Global)
	if !ok {
		return fmt.Errorf("calls a %T, not a class or function", f)
	}
	if op == 'R' {
		v, ok, err := u.reduce(g, args)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", g.Module, g.Name, err)
		}
		if ok {
			u.push(v)
			return nil
		}
	}
	obj := &Object{Module: g.Module, Name: g.Name, Args: args}
	if kwargs != nil {
		obj.Args = append(obj.Args, kwargs)
	}
	u.push(obj)
	return nil
}

func (u *unpickler) build() error {
	state, err := u.pop()
	if err != nil {
		return err
	}
	t, err := u.top()
	if err != nil {
		return err
	}
	if o, ok := t.(*Object); ok {
		o.State = state
	}
	// A dict's state (an OrderedDict's _metadata) and a tensor's (its
	// Python attributes) carry nothing an array keeps.
	return nil
}
