#!/usr/bin/env bash
# Shrinks the staged TileLang bundle (.gpu/tilelang-site.tar.xz, ../shared/gpu/stage-tilelang.sh)
# so that it, the tracked tree and a pool bundle fit the device tool's 64 MiB carry limit: drops
# z3's command-line binary (22 MB; TileLang loads libz3 through the z3 package) and stores the
# second copy of libz3 (libz3.so.4.15) as a link to the first. Everything else stays: TileLang
# imports tvm_ffi's libtvm_ffi_testing.so at start (a bundle without it fails every kernel with
# "libtvm_ffi_testing.so: cannot open shared object file", 2026-12-05). Keeps the full bundle as
# build/tilelang-site.full.tar.xz. Run from the repository root after staging.
set -euo pipefail
full=build/tilelang-site.full.tar.xz
[ -f "$full" ] || { mkdir -p build; cp .gpu/tilelang-site.tar.xz "$full"; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
tar xJf "$full" -C "$work"
rm -f "$work"/z3_solver-*.data/data/bin/z3
if [ -f "$work/z3/lib/libz3.so.4.15" ] && [ -f "$work/z3/lib/libz3.so" ]; then
  rm "$work/z3/lib/libz3.so.4.15"; ln -s libz3.so "$work/z3/lib/libz3.so.4.15"
fi
(cd "$work" && tar cf - . | xz -T0 -6 > "$OLDPWD/.gpu/tilelang-site.tar.xz")
ls -la .gpu/tilelang-site.tar.xz
