// fp16 convolution gradients on the CPU compute in float32 (order 800: after the instrumentation, so dumps and
// overflow checks read the fp16 result as before; before the iterations loop, which moves the step into a loop body).
//
// A script built for Ascend often runs its model in fp16 (official ResNet's --dtype=fp16, Keras' mixed_float16
// policy, hand-written casts). TensorFlow's CPU kernels for fp16 convolution gradients are slow: with oneDNN on, the
// filter gradients fall back to oneDNN's reference code (Conv2DBackpropFilter about 400 times slower than in
// float32); with oneDNN off, Eigen's fp16 paths are several times slower. Each such convolution (Convolutions())
// whose type is float16 and that runs on the CPU reads its fp16 inputs through Casts to float32, computes in
// float32 and gives its result through a Cast back to float16: every fp16 value is exact in float32, so are the
// products of two of them, and the sums are float32 ones rounded to fp16 once at the end, which is what Ascend's
// cube unit does (fp16 inputs, fp32 accumulation, fp16 output) and what oneDNN's fp16 kernels do inside. The node
// keeps its name; a fetched one gives the Cast's value. A convolution placed on another device (a GPU, whose fp16
// kernels are fast) is left alone, and so is one that names no device when the session or this process has a GPU
// (TensorFlow may place it there).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "optimizers/graph/graph_edit.h"
#include "optimizers/rewrite_pass.h"
#include "tensorflow/core/framework/device_factory.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/types.h"
#include "tensorflow/core/util/device_name_utils.h"

namespace npu_bridge {
namespace {

using tensorflow::NodeDef;

// The convolutions whose CPU fp16 kernels are much slower than their float32 ones (oneDNN on / off, relative to
// float32 in the measurements of docs/precision.md): every gradient, and Conv3D (4x with oneDNN off). The 2D
// forward convolutions, plain or fused with their bias and activation, keep TensorFlow's fp16 kernels, which are
// as fast as float32 within 1.1-1.4x: computing them in float32 would only add a float32 copy of their outputs,
// the largest tensors of a step, to the memory a step needs.
const std::set<std::string>& Convolutions() {
  static const auto* ops = new std::set<std::string>{
      "Conv2DBackpropInput",                  // 1.3x / 6.8x
      "Conv2DBackpropFilter",                 // 424x / 5.0x
      "Conv3D",                               // 1.4x / 4.0x
      "Conv3DBackpropInputV2",                // 1.4x / 2.5x
      "Conv3DBackpropFilterV2",               // 133x / 2.6x
      "DepthwiseConv2dNativeBackpropInput",   // 4.8x / 1.2x
      "DepthwiseConv2dNativeBackpropFilter",  // 28x / 0.8x
  };
  return *ops;
}

bool IsFp16Convolution(const NodeDef& node) {
  return Convolutions().count(node.op()) && TypeAttr(node, "T") == tensorflow::DT_HALF;
}

// True when the node runs on the CPU: placed there, or placed nowhere while no GPU is at hand (HasGpu).
bool OnCpu(const NodeDef& node, bool graph_has_gpu) {
  tensorflow::DeviceNameUtils::ParsedName parsed;
  if (tensorflow::DeviceNameUtils::ParseFullName(node.device(), &parsed) && parsed.has_type) {
    return parsed.type == tensorflow::DEVICE_CPU;
  }
  return !graph_has_gpu;
}

bool IsGpu(const std::string& device) {
  tensorflow::DeviceNameUtils::ParsedName parsed;
  return tensorflow::DeviceNameUtils::ParseFullName(device, &parsed) && parsed.has_type &&
         parsed.type == tensorflow::DEVICE_GPU;
}

// The session's devices (a session lists them in the item) or, where the caller lists none, this process's.
bool HasGpu(const tensorflow::grappler::GrapplerItem& item) {
  for (const std::string& device : item.devices()) {
    if (IsGpu(device)) return true;
  }
  static const bool process_has_gpu = [] {
    std::vector<std::string> devices;
    if (!tensorflow::DeviceFactory::ListAllPhysicalDevices(&devices).ok()) return false;
    for (const std::string& device : devices) {
      if (IsGpu(device)) return true;
    }
    return false;
  }();
  return process_has_gpu;
}

// True when `after` is `before` with every float16 turned float32 and nothing else changed.
bool EachHalfBecameFloat(const tensorflow::DataTypeVector& before, const tensorflow::DataTypeVector& after) {
  if (before.size() != after.size()) return false;
  for (size_t k = 0; k < before.size(); ++k) {
    if (after[k] != (before[k] == tensorflow::DT_HALF ? tensorflow::DT_FLOAT : before[k])) return false;
  }
  return true;
}

class CpuFp16ConvolutionPass : public RewritePass {
 public:
  std::string name() const override { return "cpu_fp16_convolution"; }

  bool Enabled(const PassPlan&, const tensorflow::grappler::GrapplerItem& item) const override {
    for (const NodeDef& node : item.graph.node()) {
      if (IsFp16Convolution(node)) return true;
    }
    return false;
  }

  absl::Status Run(const PassPlan&, const tensorflow::grappler::GrapplerItem& item, tensorflow::GraphDef* graph,
                   bool* changed) override {
    GraphEditor editor(graph);
    const bool graph_has_gpu = HasGpu(item);
    const std::set<std::string> fetched = FetchedNodes(item);
    for (const std::string& name : editor.original_nodes()) {
      NodeDef* node = editor.Find(name);
      if (!IsFp16Convolution(*node) || !OnCpu(*node, graph_has_gpu)) continue;
      tensorflow::DataTypeVector in_types, out_types;
      if (!NodeTypes(*node, &in_types, &out_types) || out_types.size() != 1) continue;
      NodeDef retyped = *node;
      (*retyped.mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
      tensorflow::DataTypeVector new_in, new_out;
      if (!NodeTypes(retyped, &new_in, &new_out) || !EachHalfBecameFloat(in_types, new_in) ||
          !EachHalfBecameFloat(out_types, new_out) ||
          !tensorflow::FindKernelDef(tensorflow::DeviceType(tensorflow::DEVICE_CPU), retyped, nullptr, nullptr).ok()) {
        continue;  // the edges would not agree, or there is no float32 kernel: leave it as it is
      }
      for (int i = 0; i < static_cast<int>(in_types.size()); ++i) {
        if (in_types[i] != tensorflow::DT_HALF) continue;
        const std::string cast =
            editor.AddCast(editor.UniqueName(name + "/npu_fp32_input_" + std::to_string(i)), node->input(i),
                           tensorflow::DT_HALF, tensorflow::DT_FLOAT, node->device());
        editor.Rewire(node, i, cast);
      }
      node->mutable_attr()->swap(*retyped.mutable_attr());
      const std::string output = TensorName(name, 0);
      const std::string result = editor.AddCast(editor.UniqueName(name + "/npu_fp16_output"), output,
                                                tensorflow::DT_FLOAT, tensorflow::DT_HALF, node->device());
      editor.RedirectConsumers(output, result, result);
      if (fetched.count(name)) editor.ReplaceFetchedOutputs(node, out_types, {{0, result}});
      *changed = true;
    }
    return absl::OkStatus();
  }
};

}  // namespace

REGISTER_NPU_REWRITE_PASS(800, CpuFp16ConvolutionPass);

}  // namespace npu_bridge
