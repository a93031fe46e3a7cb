"""Ascend precision on CPU, GPU and the simulated Ascend backend.

``modes`` says what each precision_mode / precision_mode_v2 value means here, ``mixlist``,
``customize_dtypes`` and ``impl_mode`` read the files and options that refine it, and the session layer's
precision step (``npu_bridge.core.session.steps.precision``) does all of it for every bridged session, handing
the result to the C++ rewrite passes through the session's pass plan (``npu_bridge.core.plan.pass_contract``).

``op_types`` maps the Ascend op type names of those files to TensorFlow's; ``float_status`` is upstream's
float-status ops, over the emulated device overflow register.
"""
