# label: hazard raises
# why: the one-hot grad_outputs buffer is rewritten in place between autograd.grad calls, but with create_graph=True each returned gradient's graph saved that buffer, so differentiating the jacobian again (hessian) fails
# source: https://github.com/pytorch/pytorch/issues/36903
import torch

torch.manual_seed(0)


def jacobian(y, x, create_graph=False):
    jac = []
    flat_y = y.reshape(-1)
    grad_y = torch.zeros_like(flat_y)
    for i in range(len(flat_y)):
        grad_y[i] = 1.  # <-- IPL001: grad_y was saved by the previous create_graph gradient
        grad_x, = torch.autograd.grad(flat_y, x, grad_y, retain_graph=True, create_graph=create_graph)
        jac.append(grad_x.reshape(x.shape))
        grad_y[i] = 0.  # <-- IPL001: grad_y is saved by grad_x's double-backward graph
    return torch.stack(jac).reshape(y.shape + x.shape)


def hessian(y, x):
    return jacobian(jacobian(y, x, create_graph=True), x)


def f(x):
    return x.pow(3)


x = torch.ones(4, requires_grad=True)
jac = jacobian(f(x), x)
hess = hessian(f(x), x)
