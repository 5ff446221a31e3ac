package nd_test

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestGradChecksCPU runs the numerical gradient check of every
// differentiable op on the CPU backend, in float64.
func TestGradChecksCPU(t *testing.T) { ndtest.GradChecks(t, ctx.CPU(0)) }

// TestSessionChecksCPU runs every gradient case in a session of its own
// while the default session is paused: results stay in the session and
// match the default-session run.
func TestSessionChecksCPU(t *testing.T) { ndtest.SessionChecks(t, ctx.CPU(0)) }

// TestGradGradChecksCPU checks the second derivatives that GradWith's
// CreateGraph records, for every gradient case, on the CPU backend.
func TestGradGradChecksCPU(t *testing.T) { ndtest.GradGradChecks(t, ctx.CPU(0)) }
