"""The collective world: ranks, rank tables, groups and split strategies.

world           rank size, rank id and peers of this process, from a rank table or RANK_* / CM_* variables
rank_table      reading and validating a rank table file
groups          the world group and groups made with ``create_group``
split_strategy  where a group's gradient all-reduce is cut into fused segments
pending_split   split settings made before initialization, held until the world exists
"""
