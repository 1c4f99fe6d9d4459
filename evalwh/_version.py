"""The evalwh version, in a module of its own so that any layer can read it without importing
the front door (``evalwh/__init__.py`` re-exports it)."""

__version__ = "0.1.0"
