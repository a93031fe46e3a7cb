"""Upstream import path for job information (facade)."""

from npu_bridge.core.npu_estimator.job_info import DeviceInfo, JobConfig, JobInfo, NPUBasics

__all__ = ["NPUBasics", "JobInfo", "DeviceInfo", "JobConfig"]
