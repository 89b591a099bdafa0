"""Executors: GRETA graphs over one aggregate algebra, driven per stream partition."""
