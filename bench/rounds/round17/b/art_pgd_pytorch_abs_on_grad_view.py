# label: hazard silent
# why: flat is a reshape (view) of grad, so flat.abs_() also makes grad non-negative, and the final grad.sign() then points every perturbation in the + direction.
# source: https://github.com/Trusted-AI/adversarial-robustness-toolbox/commit/12e13472bb923d154820a2741e6380734b62e458
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class PyTorchClassifier:
    def __init__(self, model, loss):
        self.model, self.loss = model, loss
        self.device = torch.device("cpu")

    def loss_gradient(self, x, y):
        x_grad = x.clone().detach().requires_grad_(True)
        loss = self.loss(self.model(x_grad), y)
        (grad,) = torch.autograd.grad(loss, x_grad)
        return grad


class ProjectedGradientDescentPyTorch:
    def __init__(self, estimator, norm=2, eps=0.3, eps_step=0.1, max_iter=3, targeted=False, decay=None):
        self.estimator, self.norm, self.eps, self.eps_step = estimator, norm, eps, eps_step
        self.max_iter, self.targeted, self.decay = max_iter, targeted, decay

    def _compute_perturbation_pytorch(self, x, y, mask, momentum=None):
        tol = 10e-8
        grad = self.estimator.loss_gradient(x=x, y=y) * (-1 if self.targeted else 1)
        if torch.any(grad.isnan()):
            grad[grad.isnan()] = 0.0
        if mask is not None:
            grad = torch.where(mask == 0.0, torch.tensor(0.0).to(self.estimator.device), grad)
        if self.decay is not None:
            ind = tuple(range(1, len(x.shape)))
            grad = grad / (torch.sum(grad.abs(), dim=ind, keepdims=True) + tol)
            grad = self.decay * momentum + grad
            momentum += grad
        flat = grad.reshape(len(grad), -1)
        if self.norm in [np.inf, "inf"]:
            flat = torch.ones_like(flat)
        elif self.norm == 1:
            i_max = torch.argmax(flat.abs_(), dim=1)  # <-- IPL002: flat is a view of grad, whose sign is read below
            flat = torch.zeros_like(flat)
            flat[range(len(flat)), i_max] = 1
        elif self.norm > 1:
            q = self.norm / (self.norm - 1)
            q_norm = torch.linalg.norm(flat, ord=q, dim=1, keepdim=True)
            flat = (flat.abs_() * q_norm.where(q_norm == 0, 1 / q_norm)) ** (q - 1)  # <-- IPL002: flat is a view of grad, whose sign is read below
        grad = flat.reshape(grad.shape) * grad.sign()
        return grad

    def _apply_perturbation_pytorch(self, x, perturbation, eps_step):
        return x + eps_step * perturbation

    def generate(self, x, y):
        adv_x = x.clone()
        for _ in range(self.max_iter):
            perturbation = self._compute_perturbation_pytorch(adv_x, y, mask=None)
            adv_x = self._apply_perturbation_pytorch(adv_x, perturbation, self.eps_step)
            delta = adv_x - x
            norm = delta.flatten(1).norm(dim=1).clamp(min=1e-12).view(-1, 1)
            adv_x = x + delta * torch.clamp(self.eps / norm, max=1.0)
        return adv_x


model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
classifier = PyTorchClassifier(model, nn.CrossEntropyLoss())
attack = ProjectedGradientDescentPyTorch(classifier, norm=2)
x = torch.randn(4, 6)
y = torch.tensor([0, 1, 2, 1])
x_adv = attack.generate(x, y)
