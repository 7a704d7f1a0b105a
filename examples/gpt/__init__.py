"""A small GPT trained character-level in 3D parallel (data x pipeline x tensor); see README.md here."""
