#!/usr/bin/env bash
# tests/fuzz/run.sh TARGET WORK SEED...: one fuzz target as a test. WORK is
# made afresh and the seeds (files, or directories of them) copied into
# WORK/corpus. Every seed runs once; then the target fuzzes from them for
# $AFFINE_FUZZ_SECONDS seconds (20 by default), adding what it finds to
# WORK/corpus. A crash, a sanitizer report, a leak, an input that runs over
# 10 s or 2 GiB fails the test and leaves the input in WORK (crash-*,
# leak-*, timeout-*, oom-*) with the report on stderr.
set -euo pipefail
target=$1 work=$2
shift 2
seconds=${AFFINE_FUZZ_SECONDS:-20}

rm -rf "$work"
mkdir -p "$work/corpus"
for seed in "$@"; do
  if [ -d "$seed" ]; then cp "$seed"/* "$work/corpus/"; else cp "$seed" "$work/corpus/"; fi
done
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# Reports with function names and lines: the sanitizers do not find Debian's
# llvm-symbolizer by themselves.
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && symbolizer=$(command -v llvm-symbolizer-19 || command -v llvm-symbolizer); then
  export ASAN_SYMBOLIZER_PATH=$symbolizer
fi
# -error_exitcode: libFuzzer's own default, 77, is what meson reads as a
# skipped test, so a crash would pass unseen.
limits=(-timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -artifact_prefix="$work/")
"$target" "${limits[@]}" "$work"/corpus/*
"$target" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 "$work/corpus"
