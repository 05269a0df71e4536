#!/usr/bin/env bash
# Packs the pure-Python packages cuda2tile needs beside TileLang (rich, jinja2 and what they
# import), built for the GPU machine's Python 3.12, into .gpu/pyextra.tar.xz (ignored by git);
# bench/gpu_env.sh unpacks it there beside ../shared/gpu/stage-tilelang.sh's bundle. Run from the
# repository root.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
mkdir -p .gpu
if [ -s .gpu/pyextra.tar.xz ] && [ "${FORCE:-0}" != 1 ]; then
  echo ".gpu/pyextra.tar.xz exists (FORCE=1 rebuilds it)"; exit 0
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$work/whl" rich jinja2 markupsafe pygments markdown-it-py mdurl
mkdir -p "$work/site"
for w in "$work"/whl/*.whl; do (cd "$work/site" && python3 -m zipfile -e "$w" .); done
(cd "$work/site" && tar cf - . | xz -T0 -6 > "$root/.gpu/pyextra.tar.xz")
ls -la .gpu/pyextra.tar.xz
