#!/bin/sh
# The whole test suite: unit, integration and format tests, first in the
# normal gcc build, then again in a clang build with AddressSanitizer and
# UndefinedBehaviorSanitizer (leaks fail the run).
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)

echo "== gcc build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== clang build with ASan and UBSan (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DENABLE_SANITIZERS=ON >/dev/null
cmake --build build-asan -j "$jobs"
ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE lint

echo "== all tests passed"
