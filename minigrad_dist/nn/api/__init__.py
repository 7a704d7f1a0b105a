"""``minigrad_dist.nn.api``: where ``RemoteModule`` is defined (``torch.distributed.nn.api``'s layout)."""
