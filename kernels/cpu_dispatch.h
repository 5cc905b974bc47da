#pragma once
// Host kernels are compiled for several x86 levels and picked at load time (GCC
// function multiversioning), so one binary uses AVX-512 where the CPU has it without
// requiring it elsewhere.

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NATIVE_OPS_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NATIVE_OPS_CPU_CLONES
#endif
