# label: hazard silent
# why: `flat` is a reshape view of `grad`, so `flat.abs_()` also overwrites grad and the later `grad.sign()` becomes all +1, destroying the attack direction.
# source: https://github.com/Trusted-AI/adversarial-robustness-toolbox/commit/12e13472bb923d154820a2741e6380734b62e458
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class PyTorchClassifier:
    def __init__(self, model, loss):
        self.model = model
        self.loss = loss
        self.device = torch.device("cpu")

    def loss_gradient(self, x, y):
        x_grad = x.clone().detach().requires_grad_(True)
        loss = self.loss(self.model(x_grad), y)
        self.model.zero_grad()
        loss.backward()
        return x_grad.grad


class ProjectedGradientDescentPyTorch:
    def __init__(self, estimator, norm=2, eps=0.3, eps_step=0.1, max_iter=3, targeted=False, decay=None):
        self.estimator = estimator
        self.norm = norm
        self.eps = eps
        self.eps_step = eps_step
        self.max_iter = max_iter
        self.targeted = targeted
        self.decay = decay

    def _compute_perturbation_pytorch(self, x, y, mask, momentum):
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

        # Apply norm bound
        flat = grad.reshape(len(grad), -1)
        if self.norm in [np.inf, "inf"]:
            flat = torch.ones_like(flat)
        elif self.norm == 1:
            i_max = torch.argmax(flat.abs_(), dim=1)  # <-- IPL002: abs_ on a view also overwrites grad
            flat = torch.zeros_like(flat)
            flat[range(len(flat)), i_max] = 1
        elif self.norm > 1:
            q = self.norm / (self.norm - 1)
            q_norm = torch.linalg.norm(flat, ord=q, dim=1, keepdim=True)
            flat = (flat.abs_() * q_norm.where(q_norm == 0, 1 / q_norm)) ** (q - 1)  # <-- IPL002: abs_ on a view also overwrites grad

        grad = flat.reshape(grad.shape) * grad.sign()
        assert x.shape == grad.shape
        return grad

    def _apply_perturbation_pytorch(self, x, perturbation, eps_step):
        return torch.clamp(x + eps_step * perturbation, 0.0, 1.0)

    def generate(self, x, y):
        x_adv = x.clone()
        momentum = torch.zeros_like(x)
        for _ in range(self.max_iter):
            perturbation = self._compute_perturbation_pytorch(x_adv, y, None, momentum)
            x_adv = self._apply_perturbation_pytorch(x_adv, perturbation, self.eps_step)
            delta = torch.clamp(x_adv - x, -self.eps, self.eps)
            x_adv = torch.clamp(x + delta, 0.0, 1.0)
        return x_adv


model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
classifier = PyTorchClassifier(model, nn.CrossEntropyLoss())
images = torch.rand(4, 1, 6, 6)
labels = torch.tensor([0, 1, 2, 1])
attack = ProjectedGradientDescentPyTorch(classifier, norm=2, eps=0.3, eps_step=0.1, max_iter=3)
x_adv = attack.generate(images, labels)
attack_l1 = ProjectedGradientDescentPyTorch(classifier, norm=1, eps=0.3, eps_step=0.1, max_iter=3)
x_adv_l1 = attack_l1.generate(images, labels)
