"""The results store, its one reader of stored points, exports and compare."""
