package optimizer

// Validator is implemented by optimizers that can check their
// hyper-parameters (every rule of this package: a negative learning rate,
// a momentum or decay rate outside [0, 1), a non-positive epsilon are
// errors).
type Validator interface {
	Validate() error
}

// Validate returns o's own validation error, or nil when o has no
// Validate method. Create and gluon.NewTrainer call it, so a wrong
// hyper-parameter fails before the first step instead of training badly.
func Validate(o Optimizer) error {
	if v, ok := o.(Validator); ok {
		return v.Validate()
	}
	return nil
}
