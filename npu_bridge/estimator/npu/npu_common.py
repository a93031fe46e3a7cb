"""Upstream import path for job information (facade)."""

from npu_bridge.pending import pending

NPUBasics = pending("npu_bridge.estimator.npu.npu_common.NPUBasics", "estimator")
JobInfo = pending("npu_bridge.estimator.npu.npu_common.JobInfo", "estimator")
DeviceInfo = pending("npu_bridge.estimator.npu.npu_common.DeviceInfo", "estimator")
JobConfig = pending("npu_bridge.estimator.npu.npu_common.JobConfig", "estimator")
