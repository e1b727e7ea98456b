"""vswbench's tests: unit/ (fast, no root) and integration/ (root, real namespaces, the
built engine). A package, so that test modules of the same name in the two folders do not
collide; helpers are imported as tests.<module> (e.g. tests.report_fixtures).
"""
