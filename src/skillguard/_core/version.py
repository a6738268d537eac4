"""The package version, in one place: the package and the audit log's header read it."""

__all__ = ["__version__"]

__version__ = "0.1.0"
