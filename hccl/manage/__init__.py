"""Group management and rank queries: see ``hccl.manage.api``."""
