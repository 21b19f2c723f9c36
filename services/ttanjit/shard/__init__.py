"""The game shard service (issue 5): ``python -m ttanjit.shard``."""
