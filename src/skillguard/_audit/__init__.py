"""_audit: see the package docstring of skillguard."""
