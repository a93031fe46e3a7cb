// Op registration of the same-host collectives (kernels: ops/kernels/shm_collective_kernels.cc, engine:
// ops/runtime/shm_engine.h). Python builds them in npu_bridge/core/collectives/shm_primitives.py; the type names
// start with "Hcom" so that dump and profiling treat them as the collectives they are.
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"

// Attributes every same-host collective has: who takes part, which collective of the group it is, its bound.
// Stateful: a collective is never folded, merged or pruned out of the order every rank runs.
#define NPU_SHM_GROUP_ATTRS                \
  Attr("group_key: int")                   \
      .Attr("slots: list(int) >= 2")       \
      .Attr("world_ranks: list(int) >= 2") \
      .Attr("group_rank: int >= 0")        \
      .Attr("local_size: int >= 2")        \
      .Attr("instance_key: int")           \
      .Attr("timeout_seconds: float = 0")  \
      .SetIsStateful()

namespace npu_bridge {

namespace {

enum class FirstDim { kTimesMembers, kPerMember, kDividedEvenly };

// Output shape = input shape with dimension 0 multiplied by the members (gather), divided by them (scatter), or
// kept when they divide it (all-to-all); a known dimension 0 that does not divide evenly is refused at graph build.
absl::Status MembersShape(tensorflow::shape_inference::InferenceContext* c, FirstDim rule) {
  std::vector<int32_t> slots;
  TF_RETURN_IF_ERROR(c->GetAttr("slots", &slots));
  tensorflow::shape_inference::ShapeHandle input;
  TF_RETURN_IF_ERROR(c->WithRankAtLeast(c->input(0), 1, &input));
  const int64_t members = static_cast<int64_t>(slots.size());
  tensorflow::shape_inference::DimensionHandle first;
  if (rule == FirstDim::kTimesMembers) {
    TF_RETURN_IF_ERROR(c->Multiply(c->Dim(input, 0), members, &first));
  } else {
    TF_RETURN_IF_ERROR(c->Divide(c->Dim(input, 0), members, /*evenly_divisible=*/true, &first));
    if (rule == FirstDim::kDividedEvenly) first = c->Dim(input, 0);
  }
  tensorflow::shape_inference::ShapeHandle output;
  TF_RETURN_IF_ERROR(c->ReplaceDim(input, 0, first, &output));
  c->set_output(0, output);
  return absl::OkStatus();
}

absl::Status GatherShape(tensorflow::shape_inference::InferenceContext* c) {
  return MembersShape(c, FirstDim::kTimesMembers);
}
absl::Status ScatterShape(tensorflow::shape_inference::InferenceContext* c) {
  return MembersShape(c, FirstDim::kPerMember);
}
absl::Status AllToAllShape(tensorflow::shape_inference::InferenceContext* c) {
  return MembersShape(c, FirstDim::kDividedEvenly);
}

}  // namespace

REGISTER_OP("HcomShmAllReduce")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int32, int64}")
    .Attr("reduction: {'sum', 'prod', 'max', 'min'}")
    .NPU_SHM_GROUP_ATTRS.SetShapeFn(tensorflow::shape_inference::UnchangedShape)
    .Doc("Element-wise reduction over the group's members on this host, through the job's shared memory.");

REGISTER_OP("HcomShmReduceScatter")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int32, int64}")
    .Attr("reduction: {'sum', 'prod', 'max', 'min'}")
    .NPU_SHM_GROUP_ATTRS.SetShapeFn(ScatterShape)
    .Doc("Slice `group_rank` (of as many equal slices along dimension 0 as members) of the element-wise reduction.");

REGISTER_OP("HcomShmAllGather")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool}")
    .NPU_SHM_GROUP_ATTRS.SetShapeFn(GatherShape)
    .Doc("Every member's input (equal shapes) concatenated along dimension 0 in group-rank order.");

REGISTER_OP("HcomShmAllToAll")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool}")
    .NPU_SHM_GROUP_ATTRS.SetShapeFn(AllToAllShape)
    .Doc(
        "Slice k (of as many equal slices along dimension 0 as members) goes to member k; slice k of the output "
        "is member k's slice `group_rank`.");

REGISTER_OP("HcomShmBroadcastSend")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool}")
    .NPU_SHM_GROUP_ATTRS.SetShapeFn(tensorflow::shape_inference::UnchangedShape)
    .Doc("The root's side of a broadcast: sends its input to every member and returns it.");

REGISTER_OP("HcomShmBroadcastRecv")
    .Output("output: T")
    .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool}")
    .Attr("shape: shape")
    .Attr("root: int >= 0")
    .NPU_SHM_GROUP_ATTRS.SetShapeFn(tensorflow::shape_inference::ExplicitShape)
    .Doc("A receiver's side of a broadcast from group rank `root`: a tensor of `shape`.");

}  // namespace npu_bridge

#undef NPU_SHM_GROUP_ATTRS
