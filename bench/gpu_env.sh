# Sourced by the bench/gpu_*.sh scripts on the GPU machine (from the repository root): unpacks the
# staged TileLang bundle (.gpu/, see ../shared/gpu/README.md) into /tmp/site once, sets the Python
# path and the caches, and records the device and the time in $RES/device.txt.
RES=${OUT:-build/gpu_results}
mkdir -p "$RES" /tmp/site
[ -d /tmp/site/tilelang ] || tar xJf .gpu/tilelang-site.tar.xz -C /tmp/site
[ -d /tmp/site/rich ] || tar xJf .gpu/pyextra.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 CUDA2TILE_CACHE=/tmp/c2t-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$RES/device.txt"
date -u +%Y-%m-%dT%H:%M:%SZ | tee -a "$RES/device.txt"
