# label: hazard silent
# why: the non-leaf parameter is updated with add_ after each step, which rebases it onto a new grad_fn; the next backward(inputs=[non_leaf_param]) then fills .grad differently from autograd.grad for the same tensor, so the second iteration reads a wrong gradient
# source: https://github.com/pytorch/pytorch/issues/79708
import torch

torch.manual_seed(0)

param = torch.tensor([1., 2., 3.], requires_grad=True)

non_leaf_param = param.clone()

grads_with_grad = []
grads_with_backward = []
for i in range(2):
    inner_clone = non_leaf_param.clone()
    non_leaf_param.grad = None
    g, = torch.autograd.grad(inner_clone.sum(), non_leaf_param, create_graph=True)
    assert g is not None, f"grad is not set during iteration {i} for grad call"
    grads_with_grad.append(g)
    inner_clone.sum().backward(inputs=[non_leaf_param], create_graph=True)
    assert non_leaf_param.grad is not None, f"grad is not set during iteration {i} for backward call"
    grads_with_backward.append(non_leaf_param.grad)

    # In-place op messes up grad population during the second iteration.
    non_leaf_param.add_(1., alpha=0.1)  # <-- IPL006: rebinds the tensor later passed to backward(inputs=...)

grad_with_grad_0, grad_with_grad_1 = grads_with_grad
grad_with_backward_0, grad_with_backward_1 = grads_with_backward
