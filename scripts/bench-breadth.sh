#!/usr/bin/env bash
# make bench-breadth: Cuvil and ONNX Runtime side by side on every model in
# ../shared/models and every model ../shared/tools/export/model.sh offers
# that is in the model cache, per thread count: median ms of each, their
# ratio (cuvil/ORT, below 1 is Cuvil faster), the ratio of the two engines'
# fastest runs, and the geometric mean of the
# ratios per thread count. Prints a markdown table (progress goes to stderr).
#
# Environment:
#   BENCH_MODELS   space-separated subset: model names (mnist_cnn, kws_dscnn...)
#                  or cache folder names (mobilenet_v3_large_op13); default all
#   BENCH_THREADS  thread counts (default "1 2")
#   BENCH_RUNS     timed runs per engine, model and thread count (default 20;
#                  halved for the models over ~50 ms at 1 thread, see SLOW)
#   BENCH_ROUNDS   the runs are split into this many rounds, alternating
#                  cuvil, ORT, ORT, cuvil... so load drifts hit both alike;
#                  an engine's median is the median of its round medians
#                  (default 6: a VM's speed moves in phases of a second or
#                  so, up to 1.3x on one model; two rounds of 5 runs left
#                  single ratios +-30%)
#   BENCH_EXPORT=1 export a model.sh model missing from the cache (model.sh
#                  NAME 17, or 13 for the models it has at 13 only)
#   BENCH_OUT      also write the markdown table to this file
#   BENCH_CHECK=1  check every model on its reference data instead (cuvil
#                  check -rtol 1e-3 -atol 1e-4; CHECK_FLAGS adds flags)
#   BENCH_TRUTH=1  with BENCH_CHECK: check against the float64 ground truth
#                  that scripts/truth64.py (make truth64) wrote in each
#                  model's truth64/ folder, where it exists
#   CUVIL          the cuvil binary (default bin/cuvil), SHARED (default
#                  ../shared), CUVIL_MODELS (default ~/.cache/cuvil-models),
#                  ORT_DIR (ONNX Runtime's install, see ../shared/tools/ort)
# Inputs are random on both sides (cuvil bench's; ORT's --seed 0); integer
# inputs (token ids) are drawn from [0, 4) on both. Symbolic dims: bert
# seq=128, gru_text_dynseq and gpt_dynseq seq=64 (their test_data_set_0),
# bert_dynbatch batch=1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
CUVIL=${CUVIL:-bin/cuvil}
SHARED=${SHARED:-$(cd "$root/.." && pwd)/shared}
CACHE=${CUVIL_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/cuvil-models}
ORT_BENCH=$SHARED/tools/ort/bench.sh
MODEL_SH=$SHARED/tools/export/model.sh
THREADS=${BENCH_THREADS:-1 2}
RUNS=${BENCH_RUNS:-20}
ROUNDS=${BENCH_ROUNDS:-6}
[ -x "$CUVIL" ] || { echo "bench-breadth: $CUVIL not built (make build)" >&2; exit 1; }

# model.sh's models: name and the opset to export when missing (13 for the
# models it has only at 13, 17 for the rest).
OFFERED="resnet50:13 mobilenet_v2:13 squeezenet1_1:13 mnist_cnn:13 lstm_small:13 bert_dynbatch:13 bert_dynseq:13
efficientnet_b0:17 shufflenet_v2_x1_0:17 vit_b_16:17
mobilenet_v3_large:17 mobilenet_v3_small:17 convnext_tiny:17 regnet_y_400mf:17 resnext50_32x4d:17 densenet121:17
googlenet:17 inception_v3:17 mnasnet1_0:17 swin_t:17 deeplabv3_mobilenet_v3_large:17 lraspp_mobilenet_v3_large:17
ssdlite320_mobilenet_v3_large:17 mc3_18:17 gru_text_dynseq:17 gpt_dynseq:17 kws_dscnn:17 unet:17 yolov5n_like:17"
# Models added to models_def.py later: exported at 17 when missing.
if [ -f "$SHARED/tools/export/models_def.py" ]; then
	for name in $(grep -oE '^    "[a-z0-9_]+": ' "$SHARED/tools/export/models_def.py" | tr -d ' ":'); do
		case " $OFFERED " in *[[:space:]]$name:*) ;; *) OFFERED="$OFFERED $name:17" ;; esac
	done
fi
# Models slow enough that half the runs do (ORT over ~50 ms at 1 thread).
SLOW=" resnet50 resnext50_32x4d convnext_tiny inception_v3 swin_t ssdlite320_mobilenet_v3_large mc3_18 vit_b_16 "

dims_of() { # folder name -> cuvil/ORT dim flags (name=V ...)
	case $1 in
	bert_dynseq*) echo seq=128 ;;
	bert_dynbatch*) echo batch=1 ;;
	gru_text_dynseq* | gpt_dynseq*) echo seq=64 ;;
	esac
}

wanted() { # folder name, model name: is it in BENCH_MODELS (or is that unset)?
	[ -z "${BENCH_MODELS:-}" ] && return 0
	local w
	for w in $BENCH_MODELS; do [ "$w" = "$1" ] || [ "$w" = "$2" ] && return 0; done
	return 1
}

# The list: "folder path" lines, shared models first, then the cache's.
list=()
declare -A seen=()
for d in "$SHARED"/models/*/; do
	d=${d%/}; f=$(basename "$d")
	[ -f "$d/model.onnx" ] || continue
	wanted "$f" "${f%_op*}" || continue
	list+=("$f $d"); seen[$f]=1
done
for spec in $OFFERED; do
	name=${spec%:*}; opset=${spec#*:}
	found=0
	for f in "${!seen[@]}"; do [ "${f%_op*}" = "$name" ] && found=1; done
	for d in "$CACHE/${name}"_op*/; do
		d=${d%/}; f=$(basename "$d")
		[ -f "$d/model.onnx" ] || continue
		found=1
		[ -n "${seen[$f]:-}" ] && continue
		wanted "$f" "$name" || continue
		list+=("$f $d"); seen[$f]=1
	done
	if [ $found = 0 ] && wanted "${name}_op$opset" "$name"; then
		if [ "${BENCH_EXPORT:-0}" = 1 ]; then
			echo "bench-breadth: exporting $name (opset $opset)" >&2
			if d=$("$MODEL_SH" "$name" "$opset"); then
				f=$(basename "$d"); [ -n "${seen[$f]:-}" ] || { list+=("$f $d"); seen[$f]=1; }
			else
				echo "bench-breadth: exporting $name failed" >&2
			fi
		elif [ -n "${BENCH_MODELS:-}" ]; then
			echo "bench-breadth: $name is not in $CACHE (BENCH_EXPORT=1 exports it)" >&2
		fi
	fi
done
for w in ${BENCH_MODELS:-}; do
	ok=0
	for e in "${list[@]}"; do f=${e%% *}; [ "$f" = "$w" ] || [ "${f%_op*}" = "$w" ] && ok=1; done
	[ $ok = 1 ] || echo "bench-breadth: $w: no such model (see ../shared/models, model.sh, $CACHE)" >&2
done
[ ${#list[@]} -gt 0 ] || { echo "bench-breadth: no models" >&2; exit 1; }
have_ort=0
[ -x "$ORT_BENCH" ] && have_ort=1

median() { sort -g | awk '{a[NR]=$1} END{ if (NR==0) exit; if (NR%2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2 }'; }

cuvil_ms() { # model runs threads dims...
	local m=$1 r=$2 t=$3; shift 3
	local args=() x
	for x in "$@"; do args+=(-dim "$x"); done
	"$CUVIL" bench -model "$m" -threads "$t" -runs "$r" "${args[@]}" 2>>"$errlog" |
		awk '{for (i = 1; i < NF; i++) { if ($i == "median") md = $(i+1); if ($i == "min") mn = $(i+1) } } END { if (md != "") print md, mn }'
}
ort_ms() {
	local m=$1 r=$2 t=$3; shift 3
	local args=() x
	for x in "$@"; do args+=(--dim "$x"); done
	"$ORT_BENCH" "$m" "$t" "$r" --int-max 4 "${args[@]}" 2>>"$errlog" |
		awk '$1 == "median" { md = $2; for (i = 1; i < NF; i++) if ($i == "min") mn = $(i+1) } END { if (md != "") print md, mn }'
}

fmt() { [ "$1" = - ] && echo - || awk -v x="$1" 'BEGIN{ printf (x < 1 ? "%.3f" : x < 10 ? "%.2f" : "%.1f"), x }'; }

errlog=$(mktemp)
trap 'rm -f "$errlog"' EXIT
# BENCH_CHECK=1: check each model on its reference data instead of timing
# it (cuvil check -rtol 1e-3 -atol 1e-4, the default options; CHECK_FLAGS
# adds flags, e.g. -winograd=off), one row per model.
if [ "${BENCH_CHECK:-0}" = 1 ]; then
	pass=0; total=0
	{
		echo "| model | reference | result | max abs | max rel | seconds | note |"
		echo "|---|---|---|---|---|---|---|"
		for entry in "${list[@]}"; do
			f=${entry%% *}; d=${entry#* }
			echo "bench-breadth: checking $f" >&2
			t0=$(date +%s)
			rc=0
			data=$d ref=fp32
			if [ "${BENCH_TRUTH:-0}" = 1 ] && [ -d "$d/truth64" ]; then
				data=$d/truth64 ref=f64
			fi
			out=$("$CUVIL" check -model "$d/model.onnx" -data "$data" -rtol 1e-3 -atol 1e-4 ${CHECK_FLAGS:-} 2>&1) || rc=$?
			secs=$(( $(date +%s) - t0 ))
			total=$((total + 1))
			stats=$(printf '%s\n' "$out" | awk '/max abs/ { for (i = 1; i < NF; i++) { if ($i == "abs") { v = $(i+1); sub(",", "", v); if (v + 0 > a) a = v + 0 } if ($i == "rel") { v = $(i+1); sub(";", "", v); if (v + 0 > r) r = v + 0 } } }
				END { printf "%.3g | %.3g", a, r }')
			if [ $rc = 0 ]; then
				res=pass; pass=$((pass + 1)); note=
			elif printf '%s\n' "$out" | grep -q 'elements off'; then
				res=FAIL; note=$(printf '%s\n' "$out" | grep -o '[0-9]* of [0-9]* elements off' | head -1)
			else
				res="does not compile"; stats="- | -"; note=$(printf '%s\n' "$out" | tail -1 | cut -c1-160 | tr '|' '/')
			fi
			echo "| $f | $ref | $res | $stats | $secs | $note |"
		done
		echo
		echo "$pass of $total pass \`cuvil check -rtol 1e-3 -atol 1e-4 ${CHECK_FLAGS:-}\` on their reference data (fp32: the exporter's float32 run; f64: float64 ground truth), $(date -u +%Y-%m-%d)."
	} | if [ -n "${BENCH_OUT:-}" ]; then tee "$BENCH_OUT"; else cat; fi
	exit 0
fi

rows=()
failed=()
declare -A logsum=() mlogsum=() count=()
for entry in "${list[@]}"; do
	f=${entry%% *}; d=${entry#* }
	name=${f%_op*}
	read -r -a dims <<<"$(dims_of "$f")"
	runs=$RUNS
	case $SLOW in *" $name "*) runs=$(( (RUNS + 1) / 2 ));; esac
	per=$(( (runs + ROUNDS - 1) / ROUNDS ))
	cfail=0
	for t in $THREADS; do
		echo "bench-breadth: $f, $t thread(s), $ROUNDS x $per runs each" >&2
		cs=() os=() cmin=() omin=()
		for ((k = 0; k < ROUNDS; k++)); do
			order="c o"; [ $((k % 2)) = 1 ] && order="o c"
			for e in $order; do
				if [ $e = c ]; then
					[ $cfail = 1 ] && continue # failed once: do not compile it again
					: >"$errlog"
					v=$(cuvil_ms "$d/model.onnx" "$per" "$t" "${dims[@]}") || true
					[ -n "$v" ] && { cs+=("${v% *}"); cmin+=("${v#* }"); } || {
						cfail=1; failed+=("$f")
						echo "bench-breadth: $f: cuvil failed: $(tail -c 300 "$errlog")" >&2
					}
				elif [ $have_ort = 1 ]; then
					v=$(ort_ms "$d/model.onnx" "$per" "$t" "${dims[@]}") || true
					[ -n "$v" ] && { os+=("${v% *}"); omin+=("${v#* }"); }
				fi
			done
		done
		c=-; o=-; ratio=-; mratio=-
		[ ${#cs[@]} -gt 0 ] && c=$(printf '%s\n' "${cs[@]}" | median)
		[ ${#os[@]} -gt 0 ] && o=$(printf '%s\n' "${os[@]}" | median)
		if [ "$c" != - ] && [ "$o" != - ]; then
			ratio=$(awk -v c="$c" -v o="$o" 'BEGIN{ printf "%.2f", c / o }')
			cm=$(printf '%s\n' "${cmin[@]}" | sort -g | head -1); om=$(printf '%s\n' "${omin[@]}" | sort -g | head -1)
			mratio=$(awk -v c="$cm" -v o="$om" 'BEGIN{ if (c > 0 && o > 0) printf "%.2f", c / o; else print "-" }')
			[ "$mratio" != - ] && mlogsum[$t]=$(awk -v s="${mlogsum[$t]:-0}" -v r="$mratio" 'BEGIN{ printf "%.6f", s + log(r) }')
			logsum[$t]=$(awk -v s="${logsum[$t]:-0}" -v c="$c" -v o="$o" 'BEGIN{ printf "%.6f", s + log(c / o) }')
			count[$t]=$(( ${count[$t]:-0} + 1 ))
		fi
		rows+=("| $f | $t | $(fmt "$c") | $(fmt "$o") | $ratio | $mratio |")
	done
done

{
	echo "| model | threads | cuvil ms | ORT ms | cuvil/ORT | fastest runs' ratio |"
	echo "|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	for t in $THREADS; do
		n=${count[$t]:-0}
		if [ "$n" -gt 0 ]; then
			g=$(awk -v s="${logsum[$t]}" -v n="$n" 'BEGIN{ printf "%.2f", exp(s / n) }')
			gm=$(awk -v s="${mlogsum[$t]:-0}" -v n="$n" 'BEGIN{ printf "%.2f", exp(s / n) }')
			echo "| **geometric mean** ($n models) | $t | | | **$g** | $gm |"
		fi
	done
	[ ${#failed[@]} -gt 0 ] && echo && echo "cuvil failed on (not in the means): ${failed[*]}."
	echo
	echo "Medians of $RUNS timed runs per engine (half for the slowest models) in $ROUNDS alternating rounds, $(date -u +%Y-%m-%d), $(nproc) CPUs; the last column is the ratio of each engine's fastest run (less moved by a VM's slow phases)."
} | if [ -n "${BENCH_OUT:-}" ]; then tee "$BENCH_OUT"; else cat; fi
