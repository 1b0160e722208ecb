#!/bin/sh
# The whole test suite: unit, integration and format tests, first in the
# normal gcc build, then again in a clang build with AddressSanitizer and
# UndefinedBehaviorSanitizer (leaks fail the run), then the integration tests
# (fleets of two worker threads) in a clang build with ThreadSanitizer (any
# report fails the run: TSAN_OPTIONS in tests/CMakeLists.txt). Between them,
# Release builds with gcc and with clang (their unit tests run), since the
# optimizer's inlining is where gcc finds warnings first (issue 28). Every
# build here turns warnings into errors (FLEETSIM_WERROR); a user's build does
# not.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)

echo "== gcc build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc -DFLEETSIM_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

for cc in gcc clang; do
    echo "== $cc Release build, unit tests (build-release-$cc/)"
    cmake -S . -B "build-release-$cc" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" -DFLEETSIM_WERROR=ON \
        >/dev/null
    cmake --build "build-release-$cc" -j "$jobs"
    ctest --test-dir "build-release-$cc" --output-on-failure -j "$jobs" -L unit
done

echo "== clang build with ASan and UBSan (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DENABLE_SANITIZERS=ON -DFLEETSIM_WERROR=ON >/dev/null
cmake --build build-asan -j "$jobs"
ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE lint

echo "== clang build with TSan, integration tests (build-tsan/)"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DENABLE_TSAN=ON -DFLEETSIM_WERROR=ON >/dev/null
cmake --build build-tsan -j "$jobs"
ctest --test-dir build-tsan --output-on-failure -j "$jobs" -L integration

echo "== all tests passed"
