// iterations_per_loop: names shared by the guard op and the rewrite pass that builds the training loop. What
// Python hands down (the IterationOp attribute, the loop count) is in the pass contract (pass_contract.h).
#ifndef NPU_BRIDGE_OPTIMIZERS_ITERATIONS_LOOP_H_
#define NPU_BRIDGE_OPTIMIZERS_ITERATIONS_LOOP_H_

namespace npu_bridge {

// Bool attr on the node that replaces a fetched IterationOp once the loop is built (makes the pass idempotent).
constexpr char kLoopBuiltAttr[] = "_npu_iterations_loop_built";
// The op every IterationOp depends on. It fails when it runs, i.e. when no loop was built around the
// IterationOp, with the message in its attr; the pass removes it when it builds the loop.
constexpr char kGuardOp[] = "NpuIterationsLoopGuard";
constexpr char kGuardMessageAttr[] = "message";

}  // namespace npu_bridge

#endif  // NPU_BRIDGE_OPTIMIZERS_ITERATIONS_LOOP_H_
