"""The package version, in one place (read by ``pyproject.toml``, manifests and ``--version``)."""

__version__ = "0.1.0"
