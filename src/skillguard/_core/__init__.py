"""_core: see the package docstring of skillguard."""
