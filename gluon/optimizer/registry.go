package optimizer

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Factory makes an optimizer with the given learning rate and the rule's
// default settings.
type Factory func(lr float64) Optimizer

var registry = struct {
	sync.RWMutex
	m map[string]Factory
}{m: map[string]Factory{
	"sgd":     func(lr float64) Optimizer { return NewSGD(lr) },
	"nag":     func(lr float64) Optimizer { return NewNAG(lr, 0) },
	"adam":    func(lr float64) Optimizer { return NewAdam(lr) },
	"adamw":   func(lr float64) Optimizer { return NewAdamW(lr, 0.01) },
	"rmsprop": func(lr float64) Optimizer { return NewRMSProp(lr) },
	"adagrad": func(lr float64) Optimizer { return NewAdaGrad(lr) },
}}

// Create returns the optimizer registered under name (case-insensitive,
// as MXNet's mx.optimizer.create) with learning rate lr and its defaults:
// "sgd", "nag", "adam", "adamw", "rmsprop", "adagrad", or a name added with
// Register. Like MXNet, "sgd" and "nag" start without momentum; set the
// Momentum field of the returned *SGD to add it. An unknown name or an
// invalid learning rate gives an error.
func Create(name string, lr float64) (Optimizer, error) {
	key := strings.ToLower(name)
	registry.RLock()
	f, ok := registry.m[key]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("optimizer: unknown optimizer %q; known: %s", name, strings.Join(Names(), ", "))
	}
	o := f(lr)
	if err := Validate(o); err != nil {
		return nil, err
	}
	return o, nil
}

// Register makes f available to Create under name (case-insensitive). It
// returns an error when name is empty, f is nil or the name is taken.
func Register(name string, f Factory) error {
	key := strings.ToLower(name)
	if key == "" || f == nil {
		return fmt.Errorf("optimizer: Register needs a name and a factory")
	}
	registry.Lock()
	defer registry.Unlock()
	if _, ok := registry.m[key]; ok {
		return fmt.Errorf("optimizer: %q is already registered", name)
	}
	registry.m[key] = f
	return nil
}

// Names returns the registered optimizer names, sorted.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
