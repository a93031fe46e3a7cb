"""Ascend precision on CPU, GPU and the simulated Ascend backend.

``modes`` says what each precision_mode / precision_mode_v2 value means here, ``mixlist``,
``customize_dtypes`` and ``impl_mode`` read the files and options that refine it, ``pass_params`` hands the
result to the C++ rewrite passes and ``session_step`` does all of it for every bridged session.
"""
