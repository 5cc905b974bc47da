#pragma once
// Host kernels are compiled for several x86 levels and picked at load time (GCC
// function multiversioning), so one binary uses AVX-512 where the CPU has it without
// requiring it elsewhere.

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer instruments the clones' resolvers, which the loader runs before the
// sanitizer's runtime is up: one (default) version under it.
#define NATIVE_OPS_CPU_CLONES
#else
#define NATIVE_OPS_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#else
#define NATIVE_OPS_CPU_CLONES
#endif
