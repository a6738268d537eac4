"""_cli: see the package docstring of skillguard."""
