"""_skills: see the package docstring of skillguard."""
