"""The package version (semantic versioning; pyproject.toml carries the same): a leaf module, so that
what stamps it into files (the exporter's `producer`) imports it without importing the package."""

__version__ = "0.1.0"
