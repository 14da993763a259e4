# label: safe no-twin
# why: PGD updates the perturbation leaf through delta.data only after each backward, and zeroes delta.grad in place, so no live graph ever sees the writes.
# source: https://github.com/BorealisAI/advertorch/issues/85
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def batch_multiply(float_or_vector, tensor):
    return float_or_vector * tensor


def batch_clamp(float_or_vector, tensor):
    return torch.clamp(tensor, -float_or_vector, float_or_vector)


def clamp(input, min=None, max=None):
    return torch.clamp(input, min=min, max=max)


def perturb_iterative(xvar, yvar, predict, nb_iter, eps, eps_iter, loss_fn, delta_init=None, minimize=False,
                      ord=np.inf, clip_min=0.0, clip_max=1.0):
    if delta_init is not None:
        delta = delta_init
    else:
        delta = torch.zeros_like(xvar)

    delta.requires_grad_()
    for ii in range(nb_iter):
        outputs = predict(xvar + delta)
        loss = loss_fn(outputs, yvar)
        if minimize:
            loss = -loss

        loss.backward()
        if ord == np.inf:
            grad_sign = delta.grad.data.sign()
            delta.data = delta.data + batch_multiply(eps_iter, grad_sign)
            delta.data = batch_clamp(eps, delta.data)
            delta.data = clamp(xvar.data + delta.data, clip_min, clip_max) - xvar.data
        delta.grad.data.zero_()

    x_adv = clamp(xvar + delta, clip_min, clip_max)
    return x_adv


class LinfPGDAttack:
    def __init__(self, predict, loss_fn=None, eps=0.3, nb_iter=4, eps_iter=0.01, rand_init=True):
        self.predict = predict
        self.loss_fn = loss_fn if loss_fn is not None else nn.CrossEntropyLoss(reduction="sum")
        self.eps = eps
        self.nb_iter = nb_iter
        self.eps_iter = eps_iter
        self.rand_init = rand_init

    def perturb(self, x, y):
        delta = torch.zeros_like(x)
        delta = nn.Parameter(delta)
        if self.rand_init:
            delta.data.uniform_(-self.eps, self.eps)
            delta.data = clamp(x + delta.data, min=0.0, max=1.0) - x
        rval = perturb_iterative(x, y, self.predict, nb_iter=self.nb_iter, eps=self.eps, eps_iter=self.eps_iter,
                                 loss_fn=self.loss_fn, delta_init=delta)
        return rval.data


model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 36, 10))
for p in model.parameters():
    p.requires_grad_(False)
adversary = LinfPGDAttack(model)
cln_data = torch.rand(2, 1, 6, 6)
true_label = torch.tensor([3, 7])
adv_untargeted = adversary.perturb(cln_data, true_label)
