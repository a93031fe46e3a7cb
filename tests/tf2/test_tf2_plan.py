"""``npu_device.open()`` plans straight from the validated options: one validation, one world, no parameter_map
parsed, and the PassPlan a TF1 session with the same options gets. ``open()`` itself runs in a fresh interpreter
(opening the device changes TensorFlow for the whole process)."""

import dataclasses

import pytest
import tensorflow as tf
from helpers.tf2 import run_script

from npu_bridge.core.options import parse
from npu_bridge.core.runtime.errors import NpuUsageError
from npu_bridge.core.session import bridge
from npu_bridge.core.tf2 import function_config, option_values
from npu_bridge.core.world import world


def test_the_session_layer_plans_validated_options_as_it_plans_a_parsed_parameter_map(monkeypatch):
    validations = []
    validate = parse._validated

    def counted(*args):
        validations.append(args)
        return validate(*args)

    monkeypatch.setattr(parse, "_validated", counted)
    options = option_values.parse_assigned({"precision_mode": "allow_mix_precision", "hcom_parallel": False}, 2)
    assert len(validations) == 1 and options.get("session_device_id") == 2
    function_plan = bridge.plan_validated(
        options, tf.compat.v1.ConfigProto(), world=world.environment_world(2), function_graphs=True
    )
    assert len(validations) == 1  # planning validates nothing again
    config = tf.compat.v1.ConfigProto()
    entry = config.graph_options.rewrite_options.custom_optimizers.add(name="NpuOptimizer")
    options.write_parameter_map(entry, explicit_only=True)
    session_plan = bridge.bridge_config("", config)
    assert session_plan.options == function_plan.options and function_plan.world.device_id == 2
    assert dataclasses.replace(session_plan.pass_plan, function_graphs=True) == function_plan.pass_plan


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_open_validates_once_and_plans_what_a_tf1_session_with_the_same_options_plans(tmp_path):
    result, _ = run_script("open_plan.py", tmp_path, env={"ASCEND_DEVICE_ID": "3"})
    assert result["validated"] == 1 and result["parse_config"] == 0  # no parameter_map round trip
    assert result["environment_world"] == 1 and result["plans"] == 1
    assert result["device_id"] == [3, 3]  # the device id is an option of the plan and the world's device
    assert result["same_options"] and result["same_pass_plan"] and result["dump_enabled"]
    assert result["function_graphs"] == [True, False]
    assert result["wire_difference"] == ["_npu_function_graphs"]  # what the passes read differs only there


def test_an_eager_context_without_the_private_config_fails_with_a_clear_error():
    class ChangedContext:  # a TensorFlow whose eager context no longer has _config
        function_call_options = None

    with pytest.raises(NpuUsageError, match="no _config or function_call_options.*no public API"):
        function_config._use_for_function_calls(ChangedContext(), tf.compat.v1.ConfigProto())
