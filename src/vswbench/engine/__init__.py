"""The C packet engine seen from Python: the process, its records, its probe."""
