"""vswbench: benchmark virtual switches for containers (network namespaces)."""

__version__ = "0.1.0"
