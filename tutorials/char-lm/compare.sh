#!/bin/sh
# compare.sh times a training step of the char-lm models in Goluon
# (BenchmarkStep: two CPU contexts) and in PyTorch (pytorch_char_lm.py
# --bench: one process, THREADS=1 with a 2-thread OpenBLAS, the faster
# split on 2 cores) in pairs, REPS times, and prints the medians and the
# median of the per-pair ratios with their minimum and maximum (PyTorch's
# step time over Goluon's: above 1 means Goluon is faster).
#
#   sh tutorials/char-lm/compare.sh [gpt|lstm] [REPS]
set -eu
MODEL=${1:-gpt}
REPS=${2:-5}
cd "$(dirname "$0")"
go test -c -o /tmp/charlm-bench.test . >/dev/null
go_ms=""
py_ms=""
ratios=""
for r in $(seq "$REPS"); do
	g=$(/tmp/charlm-bench.test -test.run '^$' -test.bench "Step/$MODEL\$" -test.benchtime 40x |
		awk '/ns\/op/ {print $3 / 1e6}')
	p=$(OPENBLAS_NUM_THREADS=2 THREADS=1 /usr/bin/python3 pytorch_char_lm.py --bench "$MODEL" 40 |
		sed 's/.*"ms_per_step": \([0-9.]*\).*/\1/')
	echo "rep $r: goluon $g ms/step, pytorch $p ms/step" >&2
	go_ms="$go_ms $g"
	py_ms="$py_ms $p"
	ratios="$ratios $(awk -v g="$g" -v p="$p" 'BEGIN { print p / g }')"
done
median() { echo "$@" | tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
gm=$(median $go_ms)
pm=$(median $py_ms)
rm_=$(median $ratios)
rlo=$(echo $ratios | tr ' ' '\n' | sort -g | head -1)
rhi=$(echo $ratios | tr ' ' '\n' | sort -g | tail -1)
awk -v m="$MODEL" -v g="$gm" -v p="$pm" -v r="$rm_" -v lo="$rlo" -v hi="$rhi" 'BEGIN {
	printf "%s step (12×64 tokens): goluon %.1f ms (%.0f tokens/s), pytorch %.1f ms (%.0f tokens/s), per-pair ratio %.2f [%.2f-%.2f]\n", m, g, 768000/g, p, 768000/p, r, lo, hi
	printf "{\"model\":\"%s\",\"goluon_ms\":%.2f,\"pytorch_ms\":%.2f,\"ratio\":%.3f,\"ratio_min\":%.3f,\"ratio_max\":%.3f}\n", m, g, p, r, lo, hi
}'
