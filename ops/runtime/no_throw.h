// Keeps C++ exceptions inside the library. TensorFlow calls kernels, kernel constructors and Grappler
// optimizers from frames that do not expect exceptions, and Python calls the extern "C" functions through
// ctypes: an exception escaping any of them ends the process with no message. Everything the library exposes
// runs its body through one of these helpers, which turn an exception into an error status (or a neutral
// value for the C functions) naming where it happened.
#ifndef NPU_BRIDGE_OPS_RUNTIME_NO_THROW_H_
#define NPU_BRIDGE_OPS_RUNTIME_NO_THROW_H_

#include <exception>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "tensorflow/core/framework/op_kernel.h"

namespace npu_bridge {

// Runs `body` (returning absl::Status); an exception becomes an Internal status naming `where`.
template <typename Body>
absl::Status NoThrow(const std::string& where, Body&& body) {
  try {
    return std::forward<Body>(body)();
  } catch (const std::exception& e) {
    return absl::InternalError("npu_bridge: " + where + " failed with an unexpected C++ exception: " + e.what());
  } catch (...) {
    return absl::InternalError("npu_bridge: " + where + " failed with an unexpected C++ exception");
  }
}

// Runs `body` (returning a value) for a C function; an exception gives `fallback`.
template <typename T, typename Body>
T NoThrowValue(T fallback, Body&& body) {
  try {
    return std::forward<Body>(body)();
  } catch (...) {
    return fallback;
  }
}

// Base of every kernel of the library: Compute runs ComputeSafely, and an exception fails the op with a
// status naming it. Constructors run their body through Construct.
class NpuOpKernel : public tensorflow::OpKernel {
 public:
  using tensorflow::OpKernel::OpKernel;

  void Compute(tensorflow::OpKernelContext* ctx) final {
    const absl::Status status = NoThrow("op " + name() + " (" + type_string() + ")", [&] {
      ComputeSafely(ctx);
      return absl::OkStatus();
    });
    if (!status.ok()) ctx->SetStatus(status);
  }

 protected:
  virtual void ComputeSafely(tensorflow::OpKernelContext* ctx) = 0;

  // Runs a constructor's body; an exception fails the kernel's construction with a status naming it.
  template <typename Body>
  void Construct(tensorflow::OpKernelConstruction* ctx, Body&& body) {
    const absl::Status status = NoThrow("creating op " + name() + " (" + type_string() + ")", [&] {
      std::forward<Body>(body)();
      return absl::OkStatus();
    });
    if (!status.ok()) ctx->CtxFailure(__FILE__, __LINE__, status);
  }
};

// Base of the library's asynchronous kernels: ComputeAsync runs ComputeAsyncSafely, and an exception (or an error
// it returns before passing `done` on) fails the op and calls `done` here.
class NpuAsyncOpKernel : public tensorflow::AsyncOpKernel {
 public:
  using tensorflow::AsyncOpKernel::AsyncOpKernel;

  void ComputeAsync(tensorflow::OpKernelContext* ctx, DoneCallback done) final {
    bool handed_over = false;
    const absl::Status status = NoThrow("op " + name() + " (" + type_string() + ")",
                                        [&] { return ComputeAsyncSafely(ctx, done, &handed_over); });
    if (handed_over) return;  // whoever took `done` calls it
    if (!status.ok()) ctx->SetStatus(status);
    done();
  }

 protected:
  // Sets *handed_over once `done` is passed on (it is then called there, also on failure); a status returned
  // before that fails the op.
  virtual absl::Status ComputeAsyncSafely(tensorflow::OpKernelContext* ctx, DoneCallback done, bool* handed_over) = 0;
};

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_NO_THROW_H_
