"""Whether TensorFlow's thread pools spin while they wait for work, for the ranks of a job that share a host.

TensorFlow's inter-op and intra-op pools keep an idle thread spinning for a while before it sleeps. On a host
whose cores the job's ranks share, those spinning threads take the cores that another rank's collective, or this
rank's own progress thread, is waiting for. Measured with 2 ranks on 2 cores (``benchmarks/thread_spinning.py``):
a 4 KiB allreduce within a step 0.063 ms with spinning against 0.008 ms without, one ``Session.run`` of a 1 MiB
allreduce 0.439 against 0.154 ms, and a compute-bound data-parallel step unchanged.

``NPU_BRIDGE_THREAD_SPINNING``: ``auto`` (also when unset) turns spinning off when more than one rank of the
job runs on this host, ``0`` turns it off in every bridged session, ``1`` keeps TensorFlow's spinning. TensorFlow
creates its process-wide pools once, with the config of the first session or server that needs them, so the
choice holds for the pools created from then on (the rank's server and bridged sessions both carry it).
"""

import os

from npu_bridge.core.runtime import env_choice, log

SPINNING_VARIABLE = "NPU_BRIDGE_THREAD_SPINNING"
CHOICES = ("auto", "0", "1")


def choice(environ=os.environ):
    """Returns ``NPU_BRIDGE_THREAD_SPINNING``: "auto" (also when unset), "0" or "1".

    Raises:
      EnvironmentVariableError: another value.
    """
    return env_choice.one_of(
        environ,
        SPINNING_VARIABLE,
        CHOICES,
        "auto: off when more than one rank of the job runs on this host; 0: off; 1: TensorFlow's spinning kept",
    )


def spinning_off(current_world, environ=os.environ):
    """True when TensorFlow's thread pools should not spin in this rank (see the module docstring).

    Args:
      current_world: the collective ``World`` of this process.
      environ: mapping of environment variables.
    Raises:
      EnvironmentVariableError: NPU_BRIDGE_THREAD_SPINNING is malformed.
    """
    chosen = choice(environ)
    if chosen == "auto":
        return len(current_world.local_rank_ids) > 1
    return chosen == "0"


def apply(config, current_world, environ=os.environ):
    """Sets ``config.experimental.disable_thread_spinning`` when spinning is off here; never turns it back on.

    Args:
      config: the ConfigProto a session or server is created with (edited in place).
      current_world: the collective ``World`` of this process.
      environ: mapping of environment variables.
    """
    if spinning_off(current_world, environ):
        config.experimental.disable_thread_spinning = True
        shared = len(current_world.local_rank_ids)
        log.info_once(
            ("thread-spinning-off",),
            "rank %d: TensorFlow's thread pools do not spin (%s; %s=1 keeps spinning)",
            current_world.rank_id,
            f"{shared} ranks of the job on this host" if shared > 1 else f"{SPINNING_VARIABLE}=0",
            SPINNING_VARIABLE,
        )
