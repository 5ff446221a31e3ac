package pytorch

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// stateDictKeys are the checkpoint entries LoadStateDict looks in, in
// order, when the file is not a state dict itself (PyTorch's checkpoint
// tutorial, Lightning and most training scripts use one of them).
var stateDictKeys = []string{"state_dict", "model_state_dict", "model", "net", "module"}

// LoadStateDict reads the state dict in a file saved by torch.save: the
// file's value itself when it is a state dict (a dict of tensors); the
// state dict of a module saved whole (torch.save(model)), rebuilt from
// its parameters and persistent buffers; or, in a checkpoint dict, the
// entry "state_dict", "model_state_dict", "model", "net" or "module", or
// the only entry whose key ends in "state_dict". Tensors keep their
// state-dict names ("layer1.0.conv1.weight"). A file in which none of
// these is found is an error listing its top-level keys; LoadTensors reads
// every tensor of any file.
func LoadStateDict(path string, dev ctx.Context) (map[string]*nd.NDArray, error) {
	v, err := Load(path, dev)
	if err != nil {
		return nil, err
	}
	sd, err := findStateDict(v)
	if err != nil {
		releaseAll(v)
		return nil, fmt.Errorf("pytorch: %s: %w", path, err)
	}
	out := map[string]*nd.NDArray{}
	placed := map[*nd.NDArray]bool{}
	for i, k := range sd.Keys {
		a := sd.Values[i].(*nd.NDArray)
		if placed[a] {
			a = a.Copy() // one tensor under two names: each its own array
		}
		placed[a] = true
		out[k.(string)] = a
	}
	// Tensors outside the state dict (an optimizer's moments) are not
	// returned: release them.
	releaseExcept(v, out)
	return out, nil
}

// findStateDict returns the state dict of a loaded value as a *Dict of
// names to tensors.
func findStateDict(v any) (*Dict, error) {
	if d, ok := asStateDict(v); ok {
		return d, nil
	}
	top, ok := v.(*Dict)
	if !ok {
		return nil, fmt.Errorf("the file holds a %s, not a state dict, a module or a checkpoint dict", describe(v))
	}
	for _, k := range stateDictKeys {
		if x, ok := top.Get(k); ok {
			if d, ok := asStateDict(x); ok {
				return d, nil
			}
		}
	}
	var found *Dict
	for i, k := range top.Keys {
		if s, ok := k.(string); ok && strings.HasSuffix(s, "state_dict") && s != "optimizer_state_dict" {
			if d, ok := asStateDict(top.Values[i]); ok {
				if found != nil {
					found = nil
					break
				}
				found = d
			}
		}
	}
	if found != nil {
		return found, nil
	}
	keys := make([]string, len(top.Keys))
	for i, k := range top.Keys {
		keys[i] = keyString(k)
	}
	return nil, fmt.Errorf("no state dict in this checkpoint (its keys: %s); LoadTensors reads every tensor", strings.Join(keys, ", "))
}

// asStateDict reports whether v is a state dict (a dict whose values are
// all tensors, at least one) or a module saved whole, and returns it as a
// dict of names to tensors.
func asStateDict(v any) (*Dict, bool) {
	switch v := v.(type) {
	case *Dict:
		if len(v.Values) == 0 {
			return nil, false
		}
		for i, x := range v.Values {
			if _, ok := x.(*nd.NDArray); !ok {
				return nil, false
			}
			if _, ok := v.Keys[i].(string); !ok {
				return nil, false
			}
		}
		return v, true
	case *Object:
		d := &Dict{}
		if moduleState(v, "", d, 0) {
			return d, len(d.Keys) > 0
		}
		if v.Entries != nil { // a dict subclass holding the state dict
			return asStateDict(v.Entries)
		}
	}
	return nil, false
}

// moduleState adds the parameters and persistent buffers of a module
// saved whole (an object whose state has _parameters, _buffers and
// _modules, as torch.nn.Module pickles) to d under prefix. It reports
// whether m is such a module.
func moduleState(m *Object, prefix string, d *Dict, depth int) bool {
	st, ok := m.State.(*Dict)
	if !ok || depth > maxNesting {
		return false
	}
	params, ok1 := get[*Dict](st, "_parameters")
	buffers, ok2 := get[*Dict](st, "_buffers")
	modules, ok3 := get[*Dict](st, "_modules")
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	var skip []any
	if np, ok := st.Get("_non_persistent_buffers_set"); ok {
		if l, ok := np.(*List); ok {
			skip = l.Items
		}
	}
	for _, group := range []*Dict{params, buffers} {
		for i, k := range group.Keys {
			a, ok := group.Values[i].(*nd.NDArray)
			if !ok || slices.Contains(skip, k) { // None (no bias), or not saved in a state dict
				continue
			}
			d.Keys = append(d.Keys, prefix+keyString(k))
			d.Values = append(d.Values, a)
		}
	}
	for i, k := range modules.Keys {
		if sub, ok := modules.Values[i].(*Object); ok {
			moduleState(sub, prefix+keyString(k)+".", d, depth+1)
		}
	}
	return true
}

// get returns d[key] as a T.
func get[T any](d *Dict, key string) (T, bool) {
	v, _ := d.Get(key)
	t, ok := v.(T)
	return t, ok
}

// describe names the kind of a loaded value for messages.
func describe(v any) string {
	switch v := v.(type) {
	case *Object:
		return "Python object of class " + v.Module + "." + v.Name
	case *List:
		return "list"
	case Tuple:
		return "tuple"
	case *nd.NDArray:
		return "single tensor"
	case nil:
		return "None"
	}
	return fmt.Sprintf("%T", v)
}

// LoadTensors reads a file saved by torch.save and returns every tensor
// in it under its dotted path of keys and indices: a state dict's own
// names for a state dict, "model.fc.weight" or "optimizer.state.0.exp_avg"
// in a checkpoint {"model": ..., "optimizer": ...}, a module saved whole
// under its state-dict names. Values that are not tensors (epoch
// counters, hyperparameters) are left out. A file with no tensors is an
// error.
func LoadTensors(path string, dev ctx.Context) (map[string]*nd.NDArray, error) {
	v, err := Load(path, dev)
	if err != nil {
		return nil, err
	}
	return collect(path, v)
}

// collect flattens v's tensors, releasing the arrays of v it does not
// return (all of them on an error).
func collect(path string, v any) (map[string]*nd.NDArray, error) {
	out := map[string]*nd.NDArray{}
	placed := map[*nd.NDArray]bool{}
	w := &walker{}
	flatten(w, "", v, out, placed, 0, map[any]bool{})
	if w.err == nil && len(out) == 0 {
		w.err = errors.New("the file holds no tensors")
	}
	if w.err != nil {
		for _, a := range out {
			if !placed[a] { // copies made for second names
				a.Release()
			}
		}
		releaseAll(v)
		return nil, fmt.Errorf("pytorch: %s: %w", path, w.err)
	}
	releaseExcept(v, out)
	return out, nil
}

// releaseExcept releases the arrays in v that are not values of keep.
func releaseExcept(v any, keep map[string]*nd.NDArray) {
	kept := map[*nd.NDArray]bool{}
	for _, a := range keep {
		kept[a] = true
	}
	all := map[*nd.NDArray]bool{}
	arrays(&walker{}, v, all, map[any]bool{}, 0)
	for a := range all {
		if !kept[a] {
			a.Release()
		}
	}
}

// releaseAll releases every array in v.
func releaseAll(v any) { releaseExcept(v, nil) }

// flatten adds the tensors of v to out under prefix-joined names; placed
// holds the arrays already in out, onPath the containers being walked (a
// container inside itself is walked once).
func flatten(w *walker, prefix string, v any, out map[string]*nd.NDArray, placed map[*nd.NDArray]bool, depth int, onPath map[any]bool) {
	if !w.enter(depth) {
		return
	}
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch x := v.(type) {
	case *nd.NDArray:
		if _, dup := out[prefix]; dup {
			w.err = fmt.Errorf("two tensors are named %q", prefix)
			return
		}
		if placed[x] {
			x = x.Copy() // the same tensor under two names: each its own array
		} else {
			placed[x] = true
		}
		out[prefix] = x
		return
	case *Dict, *List, *Object:
		if onPath[x] {
			return
		}
		onPath[x] = true
		defer delete(onPath, x)
	}
	switch x := v.(type) {
	case *Dict:
		for i, k := range x.Keys {
			flatten(w, join(keyString(k)), x.Values[i], out, placed, depth+1, onPath)
		}
	case *List:
		for i, item := range x.Items {
			flatten(w, join(strconv.Itoa(i)), item, out, placed, depth+1, onPath)
		}
	case Tuple:
		for i, item := range x {
			flatten(w, join(strconv.Itoa(i)), item, out, placed, depth+1, onPath)
		}
	case *Object:
		if d := (&Dict{}); moduleState(x, "", d, 0) {
			flatten(w, prefix, d, out, placed, depth+1, onPath)
			return
		}
		if x.Entries != nil { // a dict subclass
			flatten(w, prefix, x.Entries, out, placed, depth+1, onPath)
		}
		for i, item := range x.Items { // a list subclass
			flatten(w, join(strconv.Itoa(i)), item, out, placed, depth+1, onPath)
		}
	}
}

// arrays adds every array in v to all, each container once.
func arrays(w *walker, v any, all map[*nd.NDArray]bool, seen map[any]bool, depth int) {
	if !w.enter(depth) {
		return
	}
	switch x := v.(type) {
	case *nd.NDArray:
		all[x] = true
	case *Dict:
		if !seen[x] {
			seen[x] = true
			for i := range x.Keys {
				arrays(w, x.Keys[i], all, seen, depth+1)
				arrays(w, x.Values[i], all, seen, depth+1)
			}
		}
	case *List:
		if !seen[x] {
			seen[x] = true
			for _, item := range x.Items {
				arrays(w, item, all, seen, depth+1)
			}
		}
	case Tuple:
		if len(x) > 0 && !seen[tupleKey(x)] {
			seen[tupleKey(x)] = true
			for _, item := range x {
				arrays(w, item, all, seen, depth+1)
			}
		}
	case *Object:
		if !seen[x] {
			seen[x] = true
			for _, item := range x.Args {
				arrays(w, item, all, seen, depth+1)
			}
			arrays(w, x.State, all, seen, depth+1)
			for _, item := range x.Items {
				arrays(w, item, all, seen, depth+1)
			}
			if x.Entries != nil {
				arrays(w, x.Entries, all, seen, depth+1)
			}
		}
	}
}

// keyString writes a dict key as a name part: strings as they are,
// other keys as Python prints them.
func keyString(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case int64:
		return strconv.FormatInt(k, 10)
	case nil:
		return "None"
	case bool:
		if k {
			return "True"
		}
		return "False"
	case float64:
		return strconv.FormatFloat(k, 'g', -1, 64)
	case Tuple:
		parts := make([]string, len(k))
		for i, x := range k {
			parts[i] = keyString(x)
		}
		if len(parts) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprint(k)
}
