#!/usr/bin/env bash
# Builds the native rules core (src/havok_core/) into THIS checkout's havok_env/, without pip.
#
# For several checkouts sharing one Python environment: each builds its own core and imports it
# with PYTHONPATH=<checkout>, and none installs itself into the environment. The build tree is
# build/core-<mode>/ (ignored by git), so a rebuild after editing the C++ is incremental.
#
#     ./build_core.sh            # the optimised build (the same flags as pip install)
#     ./build_core.sh asan       # AddressSanitizer + UndefinedBehaviorSanitizer (README, "Sanitizers")
#
# Needs a C++17 compiler, cmake, ninja and nanobind in the active Python
# (pip install nanobind cmake ninja). JOBS=N sets the parallel jobs (default 2).
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-release}"
case "$mode" in
    release) flags=(-DCMAKE_BUILD_TYPE=Release) ;;
    asan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHAVOK_SANITIZE=ON) ;;
    *) echo "build_core.sh: mode must be release or asan, not '$mode'" >&2; exit 2 ;;
esac
python="$(command -v python || command -v python3)"
# both modes write havok_env/_core*.so: remove it so the build links it again for this mode
rm -f havok_env/_core*.so
cmake -S . -B "build/core-$mode" -G Ninja "${flags[@]}" -DHAVOK_DEV_INPLACE=ON \
      -DPython_EXECUTABLE="$python" >/dev/null
cmake --build "build/core-$mode" -j "${JOBS:-2}"
ls havok_env/_core*.so
