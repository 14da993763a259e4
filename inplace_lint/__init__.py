"""inplace-lint: find in-place autograd hazards in PyTorch code."""

__version__ = "0.1.0"
