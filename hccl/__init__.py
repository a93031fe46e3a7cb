"""Upstream's ``hccl`` package (shipped with CANN on Ascend): ``hccl.manage.api`` and ``hccl.split.api``.

Thin facades over npu_bridge's collective world (``npu_bridge.world``, ``npu_bridge.groups``,
``npu_bridge.split_strategy``).
"""
