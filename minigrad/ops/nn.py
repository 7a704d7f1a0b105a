"""Neural-network ops (placeholder filled in below)."""

OPS = {}
