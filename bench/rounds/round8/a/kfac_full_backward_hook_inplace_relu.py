# label: hazard raises
# why: KFAC registers full backward hooks on every layer, which wrap the conv output in a BackwardHookFunction view, and the following ReLU(inplace=True) then modifies that view in place.
# source: https://github.com/f-dangel/curvlinops/issues/58
import torch
from torch.nn import Conv2d, Flatten, Linear, ReLU, Sequential

torch.manual_seed(0)


class KFACLinearOperator:
    def __init__(self, model_func, loss_func):
        self._model_func = model_func
        self._loss_func = loss_func
        self._input_covariances = {}
        self._gradient_covariances = {}
        self._hooks = []
        for name, mod in model_func.named_modules():
            if isinstance(mod, (Linear, Conv2d)):
                self._hooks.append(mod.register_forward_pre_hook(self._make_input_hook(name)))
                self._hooks.append(mod.register_full_backward_hook(self._make_grad_hook(name)))

    def _make_input_hook(self, name):
        def hook(module, inputs):
            x = inputs[0].detach().flatten(1)
            self._input_covariances[name] = x.T @ x / x.shape[0]

        return hook

    def _make_grad_hook(self, name):
        def hook(module, grad_input, grad_output):
            g = grad_output[0].detach().flatten(1)
            self._gradient_covariances[name] = g.T @ g

        return hook

    def compute_kronecker_factors(self, X, y):
        output = self._model_func(X)
        loss = self._loss_func(output, y)
        loss.backward()
        return loss


model = Sequential(
    Conv2d(1, 2, 3),
    ReLU(inplace=True),  # <-- IPL001: in-place activation on an output wrapped by a full backward hook
    Flatten(),
    Linear(18, 3),
)
kfac = KFACLinearOperator(model, torch.nn.CrossEntropyLoss())
X = torch.rand(2, 1, 5, 5)
y = torch.tensor([0, 2])
loss = kfac.compute_kronecker_factors(X, y)
