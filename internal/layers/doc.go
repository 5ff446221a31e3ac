// Package layers holds no code: its test keeps the module's imports
// pointing down the layers drawn in docs/ARCHITECTURE.md (ctx, then
// nd/backend, the backends, nd, then autograd, kvstore and gluon, then
// the programs), using the import graph that go list reports.
package layers
