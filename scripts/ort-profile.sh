#!/usr/bin/env bash
# Per-node times of ONNX Runtime on a model, to set beside `cuvil bench -profile`:
#   scripts/ort-profile.sh MODEL.onnx [THREADS=1] [RUNS=20] [ort_bench.js options: --dim seq=64 ...]
# Runs ../shared/tools/ort/ort_bench.js with ORT's profiler on (a patched copy in a temporary folder:
# enableProfiling in the session options, endProfiling after the timed runs), then prints ms per run by op
# type and the slowest nodes (kernel time only; warm-up runs are in the profile too and are counted, so the
# figures are per run over warm-up + timed runs). TOP (default 25) sets how many nodes to list.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=${SHARED:-$here/../../shared}
model=${1:?MODEL.onnx}; threads=${2:-1}; runs=${3:-20}; shift $(( $# < 3 ? $# : 3 ))
ort_dir=$("$shared/tools/ort/setup.sh")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed -e "s|executionMode: 'sequential',|executionMode: 'sequential', enableProfiling: true, profileFilePrefix: '$tmp/prof',|" \
    -e "s|^  if (a.json) console.log(JSON.stringify(result));|  session.endProfiling();\n&|" \
    "$shared/tools/ort/ort_bench.js" > "$tmp/ort_prof.js"
grep -q enableProfiling "$tmp/ort_prof.js" && grep -q endProfiling "$tmp/ort_prof.js" || { echo "ort-profile: cannot patch ort_bench.js" >&2; exit 1; }
warmup=5
NODE_PATH="$ort_dir/node_modules" node "$tmp/ort_prof.js" "$model" "$threads" "$runs" --warmup $warmup --quiet "$@"
python3 - "$tmp" $((runs + warmup)) "${TOP:-25}" <<'PY'
import json, sys, glob, collections
d = json.load(open(glob.glob(sys.argv[1] + '/prof*.json')[0]))
runs, top = int(sys.argv[2]), int(sys.argv[3])
node, op = collections.Counter(), {}
for e in d:
    if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time'):
        n = e['name'][:-len('_kernel_time')]
        node[n] += e['dur']
        op[n] = e['args'].get('op_name', '?')
by = collections.Counter()
for n, v in node.items():
    by[op[n]] += v
print('ORT kernels: %.3f ms per run' % (sum(node.values()) / runs / 1000))
for k, v in by.most_common():
    print('  %8.3f  %s' % (v / runs / 1000, k))
for n, v in node.most_common(top):
    print('%8.3f  %-16s %s' % (v / runs / 1000, op[n], n))
PY
