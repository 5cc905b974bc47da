#pragma once
// Helpers shared by the tests. Comparisons read tensors element by element in double,
// never through aten ops that an override might be routing.

#include <functional>
#include <string>

#include <ATen/core/Tensor.h>
#include <gtest/gtest.h>

#include "native_ops/native_ops.h"

namespace native_ops::testing {

/// Registers the test DSLs once: "alpha" and "beta" (available) and "ghost"
/// (unavailable, with a reason and a fix).
void register_test_dsls();

/// assert_close's default tolerances for the dtype (float32: rtol 1.3e-6, atol 1e-5, ...);
/// NaN equals NaN, infinities must match exactly.
::testing::AssertionResult close(const at::Tensor& actual, const at::Tensor& expected);

/// Exact equality of values (NaN equals NaN).
::testing::AssertionResult identical(const at::Tensor& actual, const at::Tensor& expected);

/// Hits of a node so far.
uint64_t hits(const std::string& node_id);
/// Cond errors of a node so far.
uint64_t cond_errors(const std::string& node_id);
/// Fall-throughs of a graph so far.
uint64_t fallthroughs(const std::string& op_symbol, c10::DispatchKey key = c10::DispatchKey::CPU);
/// The graph of (op, key); fails the test if there is none.
GraphInfo graph(const std::string& op_symbol, c10::DispatchKey key = c10::DispatchKey::CPU);

/// The dispatcher's computed table of aten::<op_symbol>: what runs at each key.
std::string computed_table(const std::string& op_symbol);

/// The message of the native_ops::Error `call` throws; fails the test (and returns "")
/// when it throws none.
std::string error_of(const std::function<void()>& call);

/// Runs `fn` with every override of `op_symbol` switched off: the aten result.
at::Tensor aten_reference(const std::string& op_symbol, const std::function<at::Tensor()>& fn);

}  // namespace native_ops::testing
