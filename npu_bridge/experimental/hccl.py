"""Upstream import path ``npu_bridge.experimental.hccl`` (facade)."""

from hccl.manage import api as _api

__all__ = ["get_actual_rank_size", "get_user_rank_size", "get_user_rank_id"]


def get_actual_rank_size(group="hccl_world_group"):
    """Number of ranks in ``group`` (same as ``hccl.manage.api.get_rank_size``)."""
    return _api.get_rank_size(group)


def get_user_rank_size(group="hccl_world_group"):
    """Number of ranks in ``group`` as the user configured it (same as ``get_rank_size`` here)."""
    return _api.get_rank_size(group)


def get_user_rank_id(group="hccl_world_group"):
    """This process's rank in ``group`` (same as ``hccl.manage.api.get_rank_id``)."""
    return _api.get_rank_id(group)
