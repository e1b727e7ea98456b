"""The `vswbench` command line: one command table, thin commands over the pipeline."""
