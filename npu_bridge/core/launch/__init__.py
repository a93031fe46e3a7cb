"""``npu-run``: starts the rank processes of a job on this machine (``python -m npu_bridge.core.launch``).

  plan        which ranks run here, with which environment; the generated rank table; free ports
  scheduler_plan  one npu-run per machine started by a scheduler: the rank table from the scheduler's variables
  chief_rendezvous  the chief a launcher's CM_* or MASTER_ADDR variables name (the rendezvous: world.rendezvous)
  addresses   whether a rank table's host address is this machine's (which server of a table is this one)
  supervisor  starts them, prefixes their output with the rank, stops them all when one fails or on Ctrl-C
  rank_guard  ties each rank to the launcher: a launcher that dies by any signal takes its ranks with it
  interrupt   Ctrl-C: the stop file that tells ranks the job is being stopped; in a rank, one line, no traceback
  stop_output what the launcher shows of a stopping rank's stderr (TensorFlow's log lines held back)
  stall_summary  one summary for the job when ranks stall in collectives (from the ranks' status files)
  cli         the command line

This package must not import TensorFlow: ``npu_bridge/__init__.py`` stays light when the launcher runs.

  __main__    ``python -m npu_bridge.core.launch``, the same as ``npu-run``
  job_network  the network a job's ranks run in, chosen and set up before the first rank starts
  private_network  a private network for a job whose ranks all run on this machine
  shared_private_network  one private network for the launchers of a multi-server job on this machine
  relay       authenticated connections between the private networks of a job's machines (``--job-secret``)
  gate_admission  the gate's door: one thread that accepts connections to the gate's ports and runs handshakes
"""
