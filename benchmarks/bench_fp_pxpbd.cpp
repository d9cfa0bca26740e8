// Time per iteration of the fp_pxpbd solvers on the Res 16 and Res 32 boxes (filled in by that issue).
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
