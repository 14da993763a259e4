# label: hazard raises
# why: the optimizer installs full backward hooks on every Conv2d/Linear to collect grad_output, so the Conv2d output is produced by BackwardHookFunction; the next module, ReLU(inplace=True), then rectifies that output in place, which autograd forbids
# source: https://github.com/f-dangel/singd/issues/56 (also https://github.com/f-dangel/curvlinops/issues/58)
import torch
from torch import rand
from torch.nn import Conv2d, CrossEntropyLoss, Flatten, Linear, Module, ReLU, Sequential

torch.manual_seed(0)


class SINGD(torch.optim.Optimizer):
    SUPPORTED_MODULES = (Linear, Conv2d)

    def __init__(self, model: Module, lr=0.01, alpha1=0.5, T=1):
        self.module_names, params = self._get_param_groups(model)
        super().__init__(params, dict(lr=lr, alpha1=alpha1, T=T))
        self.inputs = {}
        self.grad_outputs = {}
        self.Ks = {name: None for name in self.module_names}
        self.Cs = {name: None for name in self.module_names}
        self.hook_handles = []
        self._install_hooks(model)

    def _get_param_groups(self, model):
        names, params = [], []
        for name, mod in model.named_modules():
            if isinstance(mod, self.SUPPORTED_MODULES):
                names.append(name)
                params.append({"params": [p for p in mod.parameters() if p.requires_grad], "name": name})
        return names, params

    def _install_hooks(self, model):
        for name, module in model.named_modules():
            if name not in self.module_names:
                continue
            self.hook_handles.append(
                module.register_forward_pre_hook(lambda mod, inputs, name=name: self._save_input(name, inputs)))
            self.hook_handles.append(
                module.register_full_backward_hook(
                    lambda mod, grad_input, grad_output, name=name: self._save_grad_output(name, grad_output)))

    def _save_input(self, name, inputs):
        self.inputs[name] = inputs[0].detach()

    def _save_grad_output(self, name, grad_output):
        self.grad_outputs[name] = grad_output[0].detach()

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            name = group["name"]
            a = self.inputs[name].flatten(start_dim=1)
            g = self.grad_outputs[name].flatten(start_dim=1)
            self.Ks[name] = a.T @ a / a.shape[0]
            self.Cs[name] = g.T @ g / g.shape[0]
            for p in group["params"]:
                p.add_(p.grad, alpha=-group["lr"])



model = Sequential(
    Conv2d(1, 2, 3),
    ReLU(inplace=True),  # <-- IPL001: in-place on the output of a module with a full backward hook (TRIGGER_BUG)
    Flatten(),
    Linear(2 * 3 * 3, 3),
)
optim = SINGD(model)  # install hooks

batch_size = 2
X = rand(batch_size, 1, 5, 5)
y = torch.tensor([0, 2])

output = model(X)
loss = CrossEntropyLoss()(output, y)
optim.zero_grad()
loss.backward()
optim.step()
