"""_swarm: see the package docstring of skillguard."""
