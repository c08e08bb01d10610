"""`ssebench audit`: the ssebench CLI extension that runs ssebench-audit."""

__version__ = "0.1.0"
