"""``gradwalk train``: real training runs (xor, moons, digits, digits-cnn); see ``cli.py``."""
