"""A TF2 training loop of ``npu_device.distribute.all_reduce`` calls in a ``tf.function``, in which rank VICTIM
dies at step 3 (ranks started by hand, not by npu-run). Each rank first reports whether its eager context's threads
spin.

Usage: tf2_fault_worker.py VICTIM. The victim prints "FAULT <monotonic time>" first. A rank whose collective fails
reports the error and exits with code 1.
"""

import os
import signal
import sys
import time

import tensorflow as tf
from helpers.collectives import report
from tensorflow.python.eager import context

import npu_device

victim = int(sys.argv[1])
device = npu_device.open()
device.as_default()
rank = device.worker_id
report("spinning_off", context.context().config.experimental.disable_thread_spinning)  # 2 ranks on this host


@tf.function
def step(values):
    return npu_device.distribute.all_reduce(values, "sum")


values = tf.ones([1000]) * (rank + 1)
for number in range(1000):
    if rank == victim and number == 3:
        print(f"FAULT {time.monotonic()}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        step(values)
    except Exception as error:  # the error a script would see, whatever its class
        report("error", f"{type(error).__name__}: {error}")
        sys.exit(1)
    time.sleep(0.05)
