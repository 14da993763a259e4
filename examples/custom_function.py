"""Custom ``torch.autograd.Function`` backward passes that edit ``grad_output``.

The gradient handed to ``backward`` is not yours to change: autograd may pass the very same
tensor to another branch of the graph (an addition hands one gradient to both operands), and
after ``.sum()`` it is a broadcast view in which every element shares one memory location.
Writing into it in place silently corrupts the other branch's gradient, or all of it.

Each hazardous function below has a twin that clones before editing.

Run ``python examples/custom_function.py``.
"""

from __future__ import annotations

import torch


class MaskedReLU(torch.autograd.Function):
    """ReLU with a hand-written backward. HAZARD: zeroes the incoming gradient in place."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        grad_output[x < 0] = 0  # <-- IPL005
        return grad_output


class MaskedReLUCloned(torch.autograd.Function):
    """The same ReLU, cloning before it edits. Safe."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[x < 0] = 0  # safe: a private copy
        return grad_input


class GradientReversal(torch.autograd.Function):
    """Domain-adversarial gradient reversal. HAZARD: negates the incoming gradient in place."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, alpha: float) -> torch.Tensor:
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        return grad_output.neg_().mul_(ctx.alpha), None  # <-- IPL005


class GradientReversalSafe(torch.autograd.Function):
    """Gradient reversal that builds a new tensor. Safe."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, alpha: float) -> torch.Tensor:
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        grad = grad_output.neg() * ctx.alpha
        grad.clamp_(-10.0, 10.0)  # safe: ``grad`` is a fresh tensor owned by this backward
        return grad, None


def relu_with_skip(fn: type[torch.autograd.Function], x0: torch.Tensor) -> torch.Tensor:
    """Gradient of sum(fn(h) + h) with h = 2 * x; the true answer is 2 * (x > 0) + 2."""
    x = x0.clone().requires_grad_()
    h = 2 * x
    (fn.apply(h) + h).sum().backward()
    return x.grad


def reversal_with_classifier(
    fn: type[torch.autograd.Function], x0: torch.Tensor, w: torch.Tensor
) -> torch.Tensor:
    """Gradient of sum(w * (3 * x + reverse(x))); the true answer is 2.5 * w."""
    x = x0.clone().requires_grad_()
    (w * (3 * x + fn.apply(x, 0.5))).sum().backward()
    return x.grad


def main() -> None:
    torch.manual_seed(0)
    x0 = torch.randn(6)
    print("x                 :", x0)
    print("expected ReLU grad:", 2 * (x0 > 0).float() + 2)
    print("MaskedReLUCloned  :", relu_with_skip(MaskedReLUCloned, x0))
    print("MaskedReLU        :", relu_with_skip(MaskedReLU, x0), "<- wrong")
    print()
    w = torch.randn(6)
    print("expected reversal grad:", 2.5 * w)
    print("GradientReversalSafe  :", reversal_with_classifier(GradientReversalSafe, x0, w))
    print("GradientReversal      :", reversal_with_classifier(GradientReversal, x0, w), "<- wrong")
    try:
        x = x0.clone().requires_grad_()
        GradientReversal.apply(x * 1.0, 1.0).sum().backward()
    except RuntimeError as err:
        print("GradientReversal under .sum(): backward FAILED:", str(err).split(". ")[0])


if __name__ == "__main__":
    main()
