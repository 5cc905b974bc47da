#pragma once
// native-ops: overrides of PyTorch aten operators, routed natively in the dispatcher.
// Include this header for the whole public API.

#include "native_ops/boxed.h"
#include "native_ops/dsl.h"
#include "native_ops/error.h"
#include "native_ops/faults.h"
#include "native_ops/log.h"
#include "native_ops/names.h"
#include "native_ops/node_access.h"
#include "native_ops/plugin.h"
#include "native_ops/policy.h"
#include "native_ops/registry.h"
#include "native_ops/selection.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
