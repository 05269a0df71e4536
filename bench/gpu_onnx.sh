#!/usr/bin/env bash
# ONNX GPU benchmark (issue 18): the BERT-base transformer block at batch 8 x 512 tokens x 768 (fp32
# and fp16) and a ResNet basic block (64 channels, 56x56, batch 8), built with onnx.helper
# (bench/onnx_models.py), converted by `migrate onnx` (dynamic batch/seq: one kernel per group for
# every size), then `migrate bench --onnx`: the TileLang Model against PyTorch eager running the
# same graph, end to end and per fused group (GB/s, TFLOP/s), outputs compared with eager and with
# onnxruntime (CPU) at the full size; tile sizes tuned first (TUNE). fp32 GEMMs are exact fp32 on both sides (no tf32) unless
# ALLOW_TF32=1, which converts with --allow-tf32 and turns tf32 on in torch too.
#
# Two ways to run it:
#   1. where onnx is importable on the GPU machine, all there, in one call (carry .gpu):
#        bash bench/gpu_onnx.sh
#   2. else stage here first (builds, converts and checks on the CPU target at small sizes, into
#      build/onnx_stage, weights left out: the GPU side remakes them from the seed with numpy):
#        bash bench/gpu_onnx.sh stage          # here (about 10 min with the CPU check; CHECK=0: 1 min)
#        bash bench/gpu_onnx.sh                # there, carrying .gpu and build/onnx_stage
# Results: $OUT (device tool) or build/gpu_results: onnx_<model>.json/.txt, device.txt. About 4-6 minutes
# (the kernels compile on the first call, about 15 a transformer block); MODELS="transformer:float16"
# runs one model.
set -uo pipefail
MODELS=${MODELS:-"transformer:float32 transformer:float16 resnet:float32"}
STAGE=build/onnx_stage
tf32=${ALLOW_TF32:-0}
convert_flags=$([ "$tf32" = 1 ] && echo --allow-tf32)
# TUNE=1 (the default): `migrate bench --tune` first times a few tile sizes per GEMM and attention
# kernel on the model's inputs and keeps the fastest equal one (OUT/<model>.tiles.json); TUNE=0: defaults
tune=$([ "${TUNE:-1}" = 1 ] && echo --tune)

build_and_convert() {   # $1 model, $2 dtype, $3 folder, $4 check flag
  python3 bench/onnx_models.py build --model "$1" --dtype "$2" -o "$3.onnx" || return 1
  python3 -m migrate onnx "$3.onnx" -o "$3" $4 $convert_flags -q
}

if [ "${1:-}" = stage ]; then
  PY=${PYTHON:-python3}
  rm -rf "$STAGE"; mkdir -p "$STAGE"
  for spec in $MODELS; do
    m=${spec%%:*}; d=${spec##*:}; f="$STAGE/${m}_$d"
    echo "== stage $m $d"
    $PY bench/onnx_models.py build --model "$m" --dtype "$d" -o "$f.onnx" || exit 1
    # the CPU check runs the declared dimensions at small sizes (batch 2/5, seq 3/6); CHECK=0 skips it
    check=$([ "${CHECK:-1}" = 1 ] && echo "--check cpu")
    $PY -m migrate onnx "$f.onnx" -o "$f" $check $convert_flags -q; echo "convert exit $?"
    rm -f "$f"/*.npz "$f.onnx"
  done
  du -sh "$STAGE"
  exit 0
fi

. bench/gpu_env.sh
export COLUMNS=200
root=build/onnx_gpu
mkdir -p "$root"
if python3 -c "import onnx, onnxruntime" 2>/dev/null; then
  echo "onnx and onnxruntime are importable here: building and converting on this machine"
  for spec in $MODELS; do
    m=${spec%%:*}; d=${spec##*:}; f="$root/${m}_$d"
    build_and_convert "$m" "$d" "$f" ""; echo "convert $m $d exit $?"
  done
else
  echo "no onnx here: the staged conversions of $STAGE (bash bench/gpu_onnx.sh stage), weights remade from the seed"
  [ -d "$STAGE" ] || { echo "no $STAGE: run 'bash bench/gpu_onnx.sh stage' first and carry it"; exit 2; }
  rm -rf "$root"; cp -r "$STAGE" "$root"
  for spec in $MODELS; do
    m=${spec%%:*}; d=${spec##*:}; f="$root/${m}_$d"
    python3 bench/onnx_models.py npz --model "$m" --dtype "$d" -o "$f/${m}_$d.npz" || exit 1
  done
fi
for spec in $MODELS; do
  m=${spec%%:*}; d=${spec##*:}; f="$root/${m}_$d"
  if [ "$m" = transformer ]; then dims="--dim batch=8 --dim seq=512"; else dims="--dim batch=8"; fi
  echo "== bench $m $d ($dims)"
  timeout 280 python3 -m migrate bench --onnx "$f" $dims --reps 10 --rounds 7 $tune \
    --json "$RES/onnx_${m}_$d.json" > "$RES/onnx_${m}_$d.txt" 2>&1
  echo "bench exit $?"; cat "$RES/onnx_${m}_$d.txt" | grep -v "TileLang:"
done
