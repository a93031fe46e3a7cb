"""Upstream's ``hccl`` package (shipped with CANN on Ascend): ``hccl.manage.api`` and ``hccl.split.api``.

Thin facades over npu_bridge's collective world (``npu_bridge.core.world.world``, ``npu_bridge.core.world.groups``,
``npu_bridge.core.world.split_strategy``).
"""
