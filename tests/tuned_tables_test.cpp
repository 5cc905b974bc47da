// The shipped selection tables: one file a GPU model, each table naming the device it was
// tuned on; a machine with NVIDIA GPUs reads only its models' files, and a graph with tables
// in several keeps the first GPU's; without a driver every file is read and a graph keeps
// the first file's. nvidia_gpu_models() reads the driver's files, and nothing without them.
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "native_ops/error.h"
#include "native_ops/policy.h"
#include "native_ops/selection.h"
#include "runtime/tuned_tables.h"

namespace native_ops {
namespace {

constexpr char kH100[] = "NVIDIA H100 80GB HBM3";
constexpr char kH200[] = "NVIDIA H200";

// A shipped file's text: one table for each of `graphs`, tuned on `device`.
std::string file(const std::vector<std::string>& graphs, const std::string& device) {
  std::string select;
  for (const std::string& graph : graphs) {
    select += (select.empty() ? "" : ", ") + std::string("\"") + graph +
              R"(": {"features": ["rows", "width"], "device": {"name": ")" + device +
              R"(", "capability": "9.0"}, "tables": {"f32": {"edges": {"rows": [64], "width": [4096]},
                  "cells": ["aten", "aten", "aten", "aten"]}}})";
  }
  return R"({"version": 2, "select": {)" + select + "}}";
}

using Kept = std::map<std::string, std::pair<std::string, std::string>>;  // graph -> (file, device)
const std::pair<std::string, std::string> kFromH100 = {"h100.json", kH100}, kFromH200 = {"h200.json", kH200};

// Three files, as shipped: one GPU model's tables each. The table each graph keeps.
Kept kept(const std::vector<std::string>& gpus) {
  const std::string h100 = file({"_softmax@CUDA"}, kH100), h200 = file({"bmm@CUDA", "_softmax@CUDA"}, kH200),
                    b200 = file({"_softmax.default@CUDA"}, "NVIDIA B200");
  const std::vector<detail::TunedPolicy> files = {
      {"h100.json", h100.c_str()}, {"h200.json", h200.c_str()}, {"b200.json", b200.c_str()}};
  Kept graphs;
  for (const Policy& policy : detail::tables_for_gpus(files, gpus)) {
    for (const PolicySelection& selection : policy.select) {
      const std::string graph = selection.op_symbol == "_softmax.default" ? "_softmax" : selection.op_symbol;
      EXPECT_TRUE(graphs.emplace(graph, std::make_pair(policy.source, selection.table.device->name)).second)
          << "two tables kept for " << graph;
    }
  }
  return graphs;
}

TEST(TunedTables, AGraphKeepsTheTableTunedOnTheMachinesGpu) {
  // Only the files of the machine's GPUs are read: the H200's file holds bmm's only table.
  EXPECT_EQ(kept({kH200}), (Kept{{"_softmax", kFromH200}, {"bmm", kFromH200}}));
  EXPECT_EQ(kept({kH100}), (Kept{{"_softmax", kFromH100}}));
  // "_softmax.default" and "_softmax" name one graph.
  EXPECT_EQ(kept({"NVIDIA B200"}), (Kept{{"_softmax", {"b200.json", "NVIDIA B200"}}}));
  // Two models in one machine: both files read, a graph in both keeps the first GPU's.
  EXPECT_EQ(kept({kH200, kH100}), (Kept{{"_softmax", kFromH200}, {"bmm", kFromH200}}));
  EXPECT_EQ(kept({kH100, kH200}), (Kept{{"_softmax", kFromH100}, {"bmm", kFromH200}}));
  // A GPU no table was tuned on: none, as none could apply.
  EXPECT_EQ(kept({"NVIDIA A100-SXM4-80GB"}), Kept{});
  // No NVIDIA driver: every file, for list and explain; a graph keeps the first file's.
  EXPECT_EQ(kept({}), (Kept{{"_softmax", kFromH100}, {"bmm", kFromH200}}));
}

TEST(TunedTables, AFileThatDoesNotParseIsAnError) {
  const std::vector<detail::TunedPolicy> files = {{"broken.json", R"({"version": 2, "select": )"}};
  EXPECT_THROW(detail::tables_for_gpus(files, {}), Error);
  // On a machine with GPUs a file that names none of them is not read.
  EXPECT_NO_THROW(detail::tables_for_gpus(files, {kH200}));
}

TEST(TunedTables, EachShippedFileHoldsOneGpusTablesOncePerGraph) {
  ASSERT_FALSE(detail::tuned_policies().empty());
  std::set<std::string> models;
  for (const detail::TunedPolicy& shipped : detail::tuned_policies()) {
    const Policy policy = parse_policy(shipped.json, shipped.name);
    ASSERT_FALSE(policy.select.empty()) << shipped.name;
    std::set<std::string> graphs;
    for (const PolicySelection& selection : policy.select) {
      ASSERT_TRUE(selection.table.device.has_value()) << shipped.name << ": " << selection.op_symbol;
      EXPECT_EQ(selection.table.device->name, policy.select.front().table.device->name)
          << shipped.name << ": one GPU model a file";
      EXPECT_TRUE(graphs.insert(selection.op_symbol + "@" + selection.key).second)
          << shipped.name << ": " << selection.op_symbol << " twice";
    }
    EXPECT_TRUE(models.insert(policy.select.front().table.device->name).second)
        << shipped.name << ": a second file for " << policy.select.front().table.device->name;
  }
}

TEST(TunedTables, TheShippedH100AndH200TablesEachGoToTheirGpu) {
  for (const char* gpu : {kH100, kH200}) {
    int softmax = 0;
    for (const Policy& policy : detail::tables_for_gpus(detail::tuned_policies(), {gpu})) {
      for (const PolicySelection& selection : policy.select) {
        EXPECT_EQ(selection.table.device->name, gpu) << policy.source << ": " << selection.op_symbol;
        softmax += selection.op_symbol == "_softmax";
      }
    }
    EXPECT_EQ(softmax, 1) << "one _softmax table for " << gpu;
  }
}

TEST(TunedTables, GpuModelsAreTheDriversOrNone) {
  const std::vector<std::string> models = nvidia_gpu_models();
  std::error_code error;
  size_t gpus = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", error)) {
    gpus += std::filesystem::exists(entry.path() / "information");
  }
  EXPECT_EQ(models.size(), gpus);
  for (const std::string& model : models) {
    ASSERT_FALSE(model.empty());
    EXPECT_EQ(model.find('\t'), std::string::npos) << model;  // the padding after "Model:" is left out
    EXPECT_NE(model.front(), ' ') << model;
  }
}

}  // namespace
}  // namespace native_ops
