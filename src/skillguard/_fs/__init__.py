"""_fs: see the package docstring of skillguard."""
