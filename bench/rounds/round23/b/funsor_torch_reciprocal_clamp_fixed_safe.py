# label: safe
# why: the fix clamps out of place (x.reciprocal().clamp(...)), so the reciprocal output saved by ReciprocalBackward is never modified.
# source: https://github.com/pyro-ppl/funsor/commit/4b6d26f349f90374bc56be8446c3cf18e1941552
import functools
import math

import torch

torch.manual_seed(0)


class Op:
    def __init__(self, fn):
        self.fn = fn
        self.registry = {}
        functools.update_wrapper(self, fn)

    def register(self, *types):
        def decorator(impl):
            for t in types:
                self.registry[t] = impl
            return impl
        return decorator

    def __call__(self, *args):
        impl = self.registry.get(type(args[0]), self.fn)
        return impl(*args)


@Op
def reciprocal(x):
    return 1. / x


@Op
def log(x):
    return math.log(x)


class ops:
    reciprocal = reciprocal
    log = log


@ops.reciprocal.register(torch.Tensor)
def _reciprocal(x):
    result = x.reciprocal().clamp(max=torch.finfo(x.dtype).max)
    return result


@ops.log.register(torch.Tensor)
def _log(x):
    return x.log()


def gaussian_log_density(value, loc, precision):
    """log N(value | loc, 1/precision) computed through the ops backend."""
    variance = ops.reciprocal(precision)
    return -0.5 * ((value - loc) ** 2 * precision + ops.log(2 * math.pi * variance))


def main():
    raw_precision = torch.randn(5, requires_grad=True)
    loc = torch.randn(5, requires_grad=True)
    precision = torch.nn.functional.softplus(raw_precision) + 0.1
    value = torch.randn(5)
    log_prob = gaussian_log_density(value, loc, precision).sum()
    log_prob.backward()
    return log_prob.detach(), raw_precision.grad.clone(), loc.grad.clone()


log_prob, grad_precision, grad_loc = main()
