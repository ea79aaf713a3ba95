"""gradviz: step through PyTorch autograd and watch the real graph."""

__version__ = "0.1.0"
