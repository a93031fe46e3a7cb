// iterations_per_loop: the names the loop's kernels (ops/kernels) share with the rewrite pass that builds the loop
// (optimizers/passes/iterations_loop_pass.cc). They live here, below both, because includes go one way: optimizers/
// may include ops/runtime/, ops/ never includes optimizers/. What Python hands down (the IterationOp attribute, the
// loop count) is in the pass contract (optimizers/pass_contract.h).
#ifndef NPU_BRIDGE_OPS_RUNTIME_ITERATIONS_LOOP_H_
#define NPU_BRIDGE_OPS_RUNTIME_ITERATIONS_LOOP_H_

namespace npu_bridge {

// The op every IterationOp depends on. It fails when it runs, i.e. when no loop was built around the
// IterationOp, with the message in its attr; the pass removes it when it builds the loop.
constexpr char kGuardOp[] = "NpuIterationsLoopGuard";
constexpr char kGuardMessageAttr[] = "message";

// The marker the pass puts at the start of every loop iteration (every per-step node waits for it): it tells
// LoopIterations (ops/runtime/dump_steps.h) which iteration its run is in.
constexpr char kLoopIterationOp[] = "NpuLoopIteration";
// Attrs the pass sets on the step-numbering kernels (NpuDump, NpuOverflowCheck) of a looping graph: int, the
// steps one run takes (iterations_per_loop); bool, the node runs once per iteration (inside the loop).
constexpr char kStepsPerRunAttr[] = "steps_per_run";
constexpr char kInLoopAttr[] = "in_iterations_loop";

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPS_RUNTIME_ITERATIONS_LOOP_H_
