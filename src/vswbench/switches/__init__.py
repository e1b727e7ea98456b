"""Switch backends: one module per backend, each a Switch subclass (base.py); catalog.py lists them."""
