"""HCCL collectives across rank processes: through shared memory on one host, else on TensorFlow's gRPC runtime.

Every rank is an OS process (as every NPU has its own process on Ascend). Bridged sessions take part through the
session layer's collectives step (``npu_bridge.core.session.steps.collectives``). The pieces:

  settings      HCCL_CONNECT_TIMEOUT, HCCL_EXEC_TIMEOUT / ``hccl_timeout``, HCCL_IF_BASE_PORT
  server        this rank's ``tf.distribute.Server`` and the wait for every other rank to arrive
  watchdog      ends a rank that waits in a collective for a peer that is gone (TF can hang there)
  stall_watch   names a hang early: a rank waiting longer than NPU_BRIDGE_STALL_SECONDS reports where and for whom
  stall_report  the words of a stall report (one line per rank, one block for npu-run's summary)
  status_files  the job's status directory, where each rank says what it is doing in collectives
  keys          deterministic group and instance keys (the same on every rank, with no communication)
  registry      which collective ops a graph has and which of them a ``Session.run`` executes
  primitives    the collective ops everything lowers to: the shared-memory engine's or TensorFlow's
  shm_primitives  the same-host engine's ops (C++ ``HcomShm*``) and which groups use them
  shm_segment   the job's shared-memory segment (made by npu-run) and NPU_BRIDGE_COLLECTIVES
  thread_spinning  TensorFlow's threads do not spin where ranks share a host (NPU_BRIDGE_THREAD_SPINNING)
  shm_keeper    the segment of ranks started one by one: the host's first rank keeps it, the others get it
  hierarchy     how a reduction over several hosts splits into same-host and cross-host parts
  step_sequences  every rank agrees on the step ids of a collective graph key's runs (rank 0 holds; ranks align)
  operations    ``hccl_ops``: upstream's functions, signatures and validation
  remote_memory upstream's RDMA functions, which need device addresses: not supported off the NPU
  all_to_all    ``all_to_all_v`` / ``all_to_all_v_c`` (variable counts over a fixed-shape exchange)
  transport     carries every HCCL dtype over the dtypes TF's collective ops support
  variable_write_back  ``broadcast`` into variables: assigns the root's values back, as HCCL does
  lowering      differentiable collectives over resolved groups (gradients next to each op)
  membership    group name -> member ranks and this process's place among them

  failures      what a failed collective means, said the same way for TF1 session runs and TF2 function calls
  function_calls  collective failures in TF2 function calls become ``CollectiveError``s, as in session runs
  exposure      who can reach a job's collective servers, and the one warning when it is more than the job
  request_ids   TensorFlow's request ids drawn from well-seeded generators (else long gRPC-path jobs fail)
  job_server    the ranks' gRPC server: it serves only its job (its user here, the job's hosts elsewhere)
"""
