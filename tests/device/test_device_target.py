"""device_target / NPU_BRIDGE_DEVICE_TARGET resolution."""

import pytest
from helpers.config import npu_config

from npu_bridge.core.device import device_target
from npu_bridge.core.options import parse_config
from npu_bridge.core.runtime.errors import NpuOptionError


def test_auto_is_cpu_on_a_machine_without_gpu():
    assert device_target.resolve(None, {}) == "cpu"


def test_option_wins_over_environment():
    options = parse_config(npu_config(device_target="ascend"))
    assert device_target.resolve(options, {device_target.ENV_VARIABLE: "gpu"}) == "ascend"


def test_environment_when_option_unset():
    options = parse_config(npu_config())
    assert device_target.resolve(options, {device_target.ENV_VARIABLE: "ascend"}) == "ascend"
    assert device_target.requested(options, {device_target.ENV_VARIABLE: "auto"}) == "auto"


def test_bad_environment_value():
    with pytest.raises(NpuOptionError, match="NPU_BRIDGE_DEVICE_TARGET.*'tpu'.*auto, cpu, gpu, ascend"):
        device_target.resolve(None, {device_target.ENV_VARIABLE: "tpu"})


def test_bad_environment_value_is_shown_as_given():
    with pytest.raises(NpuOptionError, match="NPU_BRIDGE_DEVICE_TARGET' has invalid value ' cpu1 '"):
        device_target.resolve(None, {device_target.ENV_VARIABLE: " cpu1 "})
    assert device_target.requested(None, {device_target.ENV_VARIABLE: " cpu "}) == "cpu"
