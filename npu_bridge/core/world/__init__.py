"""The collective world: ranks, rank tables, groups and split strategies.

world           rank size, rank id and peers of this process, from a rank table, RANK_* / CM_* variables or a
                job scheduler's variables
rank_table      reading and validating a rank table file, waiting for one a scheduler is filling in
scheduler_env   worlds described by Slurm, torchrun, MPI launchers, TF_CONFIG and Volcano
hostlist        Slurm's node list and tasks-per-node notations
rendezvous      the chief's rendezvous, where launchers or ranks that know only the chief learn where the others run
rank_rendezvous ranks a scheduler started one by one across machines meet at rank 0 (MASTER_ADDR / MASTER_PORT)
timeouts        HCCL_CONNECT_TIMEOUT, which bounds how long a world may take to form
groups          the world group and groups made with ``create_group``
split_strategy  where a group's gradient all-reduce is cut into fused segments
pending_split   split settings made before initialization, held until the world exists
"""
