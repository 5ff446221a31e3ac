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
	"sgd":      func(lr float64) Optimizer { return NewSGD(lr) },
	"nag":      func(lr float64) Optimizer { return NewNAG(lr, 0) },
	"adam":     func(lr float64) Optimizer { return NewAdam(lr) },
	"adamw":    func(lr float64) Optimizer { return NewAdamW(lr, 0.01) },
	"rmsprop":  func(lr float64) Optimizer { return NewRMSProp(lr) },
	"adagrad":  func(lr float64) Optimizer { return NewAdaGrad(lr) },
	"adamax":   func(lr float64) Optimizer { return NewAdamax(lr) },
	"nadam":    func(lr float64) Optimizer { return NewNadam(lr) },
	"adadelta": func(lr float64) Optimizer { return NewAdaDelta(lr) },
	"ftrl":     func(lr float64) Optimizer { return NewFTRL(lr) },
	"lamb":     func(lr float64) Optimizer { return NewLAMB(lr) },
	"lars":     func(lr float64) Optimizer { return NewLARS(lr) },
	"signum":   func(lr float64) Optimizer { return NewSignum(lr) },
	"signsgd":  func(lr float64) Optimizer { return NewSignSGD(lr) },
	"radam":    func(lr float64) Optimizer { return NewRAdam(lr) },
}}

// Create returns the optimizer registered under name (case-insensitive,
// as MXNet's mx.optimizer.create) with learning rate lr and its defaults:
//
//	"sgd", "nag"        *SGD
//	"adam"              *Adam
//	"adamw"             *AdamW (weight decay 0.01, PyTorch's default)
//	"rmsprop"           *RMSProp
//	"adagrad"           *AdaGrad
//	"adadelta"          *AdaDelta (MXNet 1.x's form ignores lr; see AdaDelta)
//	"adamax"            *Adamax
//	"nadam"             *Nadam
//	"radam"             *RAdam
//	"ftrl"              *FTRL
//	"lamb"              *LAMB
//	"lars"              *LARS
//	"signum", "signsgd" *Signum (momentum 0.9, and none)
//
// or a name added with Register. The names are MXNet's (mx.optimizer's
// registry; "radam" is MXNet 2.x's, "signsgd" the momentum-free update
// MXNet's signum runs). Like MXNet, "sgd", "nag" and "lars" start without
// momentum; set the Momentum field of the returned value to add it. An
// unknown name or an invalid learning rate gives an error.
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
