package text

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// GenerateOpts configure Generate. The zero value samples from the
// model's distribution itself (temperature 1, no top-k or top-p cut) with
// sampling stream 0 and no end token: a zero field is the setting that
// changes nothing, so that Temperature 0 means 1 and TopP 0 means 1 (not
// greedy, not an empty nucleus). Greedy decoding is Greedy (or TopK 1).
type GenerateOpts struct {
	// Temperature divides the logits before sampling; 0 means 1 (it does
	// not mean greedy: set Greedy). Lower values sharpen the
	// distribution.
	Temperature float64
	// TopK, when positive, keeps only the TopK most likely tokens (and
	// any tied with the last of them), as Hugging Face's top_k.
	TopK int
	// TopP, when in (0, 1), keeps the most likely tokens whose
	// probabilities (after Temperature and TopK) add up to at least TopP,
	// at least one (nucleus sampling, Hugging Face's top_p). 0 (the zero
	// value: off) and 1 keep all.
	TopP float64
	// Greedy takes the most likely token at every step (the first of
	// equals) instead of sampling; Temperature, TopK, TopP and Seed are
	// then unused.
	Greedy bool
	// Seed picks the sampling stream. Draws come from nd's generator for
	// cpu(0) in a session of Generate's own named after Seed, which nd
	// derives from nd.Seed's seed: a program that calls nd.Seed(s) gets
	// the same tokens for the same Seed, whatever else it draws, and
	// whichever context the model runs on.
	Seed uint64
	// EOS lists the tokens that end the generation (GPT-2's
	// <|endoftext|> is 50256); the one generated is the last token
	// returned. Empty: generate maxNewTokens tokens.
	EOS []int64
	// OnToken, when set, is called with each new token as soon as it is
	// chosen (to stream the text), an EOS token too, before the
	// generation ends on it: it sees exactly the tokens Generate returns.
	// Returning false ends the generation after that token.
	// GenerateBatch, which continues several sequences, takes
	// OnBatchToken instead (OnToken set is an error there).
	OnToken func(tok int64) bool
	// OnBatchToken is OnToken for GenerateBatch: it is called with the
	// row (the index of the prompt) and each new token of that row as
	// soon as it is chosen, the rows of one step in order (row 0's first
	// token, row 1's first, ..., then row 0's second), an EOS token too;
	// it sees exactly the tokens GenerateBatch returns, and no token of a
	// row that has ended. Returning false ends that row after that token;
	// the others go on. Generate calls it with row 0, after OnToken when
	// both are set.
	OnBatchToken func(row int, tok int64) bool
}

// Generate continues prompt (token ids) by up to maxNewTokens tokens and
// returns the new tokens, without the prompt. It runs in predict mode
// (no dropout, nothing recorded) on the first context the parameters are
// on, through a Cache: the prompt costs one pass, every later token one
// position. The prompt and the new tokens but the last (which is
// returned, never fed back) must fit NPositions: a prompt of NPositions
// tokens can still get one new token.
// Bad options, token ids outside the vocabulary and uninitialised
// parameters are returned as errors. GenerateBatch continues several
// prompts at once.
func (m *GPT2) Generate(prompt []int64, maxNewTokens int, o GenerateOpts) ([]int64, error) {
	if err := m.checkGenerate(prompt, maxNewTokens, o); err != nil {
		return nil, err
	}
	if maxNewTokens == 0 {
		return []int64{}, nil
	}
	var emit func(int, int64) bool
	if o.OnToken != nil || o.OnBatchToken != nil {
		emit = func(_ int, tok int64) bool {
			more := true
			if o.OnToken != nil {
				more = o.OnToken(tok)
			}
			if o.OnBatchToken != nil {
				more = o.OnBatchToken(0, tok) && more
			}
			return more
		}
	}
	samplers := []*nd.Session{nd.NewSession(fmt.Sprintf("text.Generate/%d", o.Seed))}
	out, err := m.decode([][]int64{prompt}, maxNewTokens, o, samplers, emit)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// checkGenerate returns an error for arguments Generate cannot take.
func (m *GPT2) checkGenerate(prompt []int64, maxNew int, o GenerateOpts) error {
	switch {
	case len(prompt) == 0:
		return fmt.Errorf("text: generate: empty prompt (GPT-2 starts from a token: <|endoftext|>, 50256, for none)")
	case maxNew < 0:
		return fmt.Errorf("text: generate: %d new tokens", maxNew)
	case len(prompt)+max(maxNew-1, 0) > m.cfg.NPositions:
		// The last new token is returned, never fed back: it needs no
		// position of its own.
		return fmt.Errorf("text: generate: a prompt of %d tokens and %d new ones need %d positions and exceed the %d positions",
			len(prompt), maxNew, len(prompt)+max(maxNew-1, 0), m.cfg.NPositions)
	case o.Temperature < 0 || math.IsNaN(o.Temperature) || math.IsInf(o.Temperature, 0):
		return fmt.Errorf("text: generate: temperature %g: want a positive number (0 for 1)", o.Temperature)
	case o.TopK < 0:
		return fmt.Errorf("text: generate: top-k %d is negative", o.TopK)
	case !(o.TopP >= 0 && o.TopP <= 1):
		return fmt.Errorf("text: generate: top-p %g outside [0, 1]", o.TopP)
	}
	for i, t := range prompt {
		if t < 0 || t >= int64(m.cfg.VocabSize) {
			return fmt.Errorf("text: generate: prompt token %d at %d outside [0, %d)", t, i, m.cfg.VocabSize)
		}
	}
	return nil
}

// pick chooses the next token from one position's logits.
func pick(logits []float64, o GenerateOpts, sampler *nd.Session) int64 {
	if o.Greedy {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		return int64(best)
	}
	probs := Filter(logits, o)
	w := sampler.FromSlice(ctx.CPU(0), probs, len(probs))
	defer w.Release()
	tok := nd.Categorical(w, 1, false)
	defer tok.Release()
	return tok.Int64s()[0]
}

// Filter turns one position's logits into the distribution Generate
// samples from with o: the logits divided by the temperature, those
// below the TopK-th largest dropped, the softmax taken, and the least
// likely tokens beyond the TopP nucleus dropped. Dropped tokens get
// probability 0; the rest keep their softmax values (not renormalised).
// Greedy is not consulted.
func Filter(logits []float64, o GenerateOpts) []float64 {
	temp := o.Temperature
	if temp == 0 {
		temp = 1
	}
	x := make([]float64, len(logits))
	for i, v := range logits {
		x[i] = v / temp
	}
	if o.TopK > 0 && o.TopK < len(x) {
		kth := kthLargest(x, o.TopK)
		for i, v := range x {
			if v < kth {
				x[i] = math.Inf(-1)
			}
		}
	}
	top := math.Inf(-1)
	for _, v := range x {
		top = max(top, v)
	}
	sum := 0.0
	for i, v := range x {
		x[i] = math.Exp(v - top)
		sum += x[i]
	}
	for i := range x {
		x[i] /= sum
	}
	if o.TopP > 0 && o.TopP < 1 {
		// The tokens left, most likely first; among equals the higher id
		// first, so that ties at the boundary drop the lower ids, as
		// Hugging Face's stable ascending sort does.
		type cand struct {
			p  float64
			id int
		}
		var order []cand
		for i, p := range x {
			if p > 0 {
				order = append(order, cand{p, i})
			}
		}
		slices.SortFunc(order, func(a, b cand) int {
			if c := cmp.Compare(b.p, a.p); c != 0 {
				return c
			}
			return cmp.Compare(b.id, a.id)
		})
		cum := 0.0
		for n, c := range order {
			if n > 0 && cum >= o.TopP {
				x[c.id] = 0
			}
			cum += c.p
		}
	}
	return x
}

// kthLargest returns the k-th largest value of x (1 ≤ k ≤ len(x)),
// through a min-heap of the k largest so far.
func kthLargest(x []float64, k int) float64 {
	h := make([]float64, 0, k)
	for _, v := range x {
		switch {
		case len(h) < k:
			h = append(h, v)
			for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case v > h[0]:
			h[0] = v
			for i := 0; ; {
				small := i
				if l := 2*i + 1; l < k && h[l] < h[small] {
					small = l
				}
				if r := 2*i + 2; r < k && h[r] < h[small] {
					small = r
				}
				if small == i {
					break
				}
				h[i], h[small] = h[small], h[i]
				i = small
			}
		}
	}
	return h[0]
}
