"""Upstream import path for HCCL collective ops (facade)."""

from npu_bridge.pending import pending

allreduce = pending("npu_bridge.hccl.hccl_ops.allreduce", "collectives")
allgather = pending("npu_bridge.hccl.hccl_ops.allgather", "collectives")
broadcast = pending("npu_bridge.hccl.hccl_ops.broadcast", "collectives")
reduce = pending("npu_bridge.hccl.hccl_ops.reduce", "collectives")
reduce_scatter = pending("npu_bridge.hccl.hccl_ops.reduce_scatter", "collectives")
send = pending("npu_bridge.hccl.hccl_ops.send", "collectives")
receive = pending("npu_bridge.hccl.hccl_ops.receive", "collectives")
remote_read = pending("npu_bridge.hccl.hccl_ops.remote_read", "collectives")
remote_ref_read = pending("npu_bridge.hccl.hccl_ops.remote_ref_read", "collectives")
remote_write = pending("npu_bridge.hccl.hccl_ops.remote_write", "collectives")
remote_scatter_write = pending("npu_bridge.hccl.hccl_ops.remote_scatter_write", "collectives")
gather_all_to_all_v = pending("npu_bridge.hccl.hccl_ops.gather_all_to_all_v", "collectives")
all_to_all_v = pending("npu_bridge.hccl.hccl_ops.all_to_all_v", "collectives")
all_to_all_v_c = pending("npu_bridge.hccl.hccl_ops.all_to_all_v_c", "collectives")
