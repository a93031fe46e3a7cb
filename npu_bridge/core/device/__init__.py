"""The device a session computes on.

device_target  ``cpu``, ``gpu`` or ``ascend`` (the simulated Ascend backend)
backend        applying the backend to a session's config
device_id      which NPU device id this process drives
device_mode    fp16 overflow mode of the simulated Ascend device (saturation or INF/NaN)
"""
