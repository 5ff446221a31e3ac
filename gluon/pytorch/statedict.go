package pytorch

import (
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
		all := map[*nd.NDArray]bool{}
		arrays(v, all, map[any]bool{})
		for a := range all {
			a.Release()
		}
		return nil, fmt.Errorf("pytorch: %s: %w", path, err)
	}
	out, err := collect(path, sd, "")
	if err != nil {
		return nil, err
	}
	// Tensors outside the state dict (an optimizer's moments) are not
	// returned: release them.
	kept := map[*nd.NDArray]bool{}
	for _, a := range out {
		kept[a] = true
	}
	all := map[*nd.NDArray]bool{}
	arrays(v, all, map[any]bool{})
	for a := range all {
		if !kept[a] {
			a.Release()
		}
	}
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
		if !moduleState(v, "", d, 0) || len(d.Keys) == 0 {
			return nil, false
		}
		return d, true
	}
	return nil, false
}

// moduleState adds the parameters and persistent buffers of a module
// saved whole (an object whose state has _parameters, _buffers and
// _modules, as torch.nn.Module pickles) to d under prefix. It reports
// whether m is such a module.
func moduleState(m *Object, prefix string, d *Dict, depth int) bool {
	st, ok := m.State.(*Dict)
	if !ok || depth > maxDepth {
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
// in a checkpoint {"model": ..., "optimizer": ...}. Values that are not
// tensors (epoch counters, hyperparameters) are left out; so are modules
// saved whole (use LoadStateDict). A file with no tensors is an error.
func LoadTensors(path string, dev ctx.Context) (map[string]*nd.NDArray, error) {
	v, err := Load(path, dev)
	if err != nil {
		return nil, err
	}
	return collect(path, v, "")
}

// collect flattens v's tensors under prefix, releasing everything in v on
// an error.
func collect(path string, v any, prefix string) (map[string]*nd.NDArray, error) {
	out := map[string]*nd.NDArray{}
	placed := map[*nd.NDArray]bool{}
	if err := flatten(prefix, v, out, placed, 0); err != nil {
		all := map[*nd.NDArray]bool{}
		arrays(v, all, map[any]bool{})
		for _, a := range out {
			all[a] = true
		}
		for a := range all {
			a.Release()
		}
		return nil, fmt.Errorf("pytorch: %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pytorch: %s holds no tensors", path)
	}
	return out, nil
}

// flatten adds the tensors of v to out under prefix-joined names; placed
// holds the arrays already in out.
func flatten(prefix string, v any, out map[string]*nd.NDArray, placed map[*nd.NDArray]bool, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%q is nested more than %d deep (or in itself)", prefix, maxDepth)
	}
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch v := v.(type) {
	case *nd.NDArray:
		if _, dup := out[prefix]; dup {
			return fmt.Errorf("two tensors have the name %q", prefix)
		}
		if placed[v] {
			v = v.Copy() // the same tensor under two names: each its own array
		}
		placed[v] = true
		out[prefix] = v
	case *Dict:
		for i, k := range v.Keys {
			if err := flatten(join(keyString(k)), v.Values[i], out, placed, depth+1); err != nil {
				return err
			}
		}
	case *List:
		for i, x := range v.Items {
			if err := flatten(join(strconv.Itoa(i)), x, out, placed, depth+1); err != nil {
				return err
			}
		}
	case Tuple:
		for i, x := range v {
			if err := flatten(join(strconv.Itoa(i)), x, out, placed, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxDepth bounds the nesting of containers LoadStateDict walks.
const maxDepth = 100

// arrays adds every array in v to all.
func arrays(v any, all map[*nd.NDArray]bool, seen map[any]bool) {
	switch v := v.(type) {
	case *nd.NDArray:
		all[v] = true
	case *Dict:
		if !seen[v] {
			seen[v] = true
			for i := range v.Keys {
				arrays(v.Keys[i], all, seen)
				arrays(v.Values[i], all, seen)
			}
		}
	case *List:
		if !seen[v] {
			seen[v] = true
			for _, x := range v.Items {
				arrays(x, all, seen)
			}
		}
	case Tuple:
		for _, x := range v {
			arrays(x, all, seen)
		}
	case *Object:
		if !seen[v] {
			seen[v] = true
			for _, x := range v.Args {
				arrays(x, all, seen)
			}
			arrays(v.State, all, seen)
		}
	}
}

func keyString(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case int64:
		return strconv.FormatInt(k, 10)
	}
	return fmt.Sprint(k)
}
