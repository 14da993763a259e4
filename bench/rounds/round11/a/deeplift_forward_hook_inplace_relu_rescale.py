# label: hazard silent
# why: the DeepLift-style rescale rule records each ReLU's input in a forward hook, but the ReLU is in place, so the recorded input already equals the output and the multipliers silently degrade to 1.
# source: https://github.com/meta-pytorch/captum/pull/201
import torch
import torch.nn as nn

torch.manual_seed(0)


class DeepLiftRescale:
    def __init__(self, model):
        self.model = model
        self.handles = []
        self.records = {}
        for name, module in model.named_modules():
            if isinstance(module, nn.ReLU):
                self.handles.append(module.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def forward_hook(module, inputs, outputs):
            self.records.setdefault(name, []).append((inputs[0].detach(), outputs.detach()))
        return forward_hook

    def attribute(self, inputs, baselines, target):
        self.records = {}
        with torch.no_grad():
            self.model(inputs)
            self.model(baselines)
        multipliers = {}
        for name, ((x_in, x_out), (r_in, r_out)) in self.records.items():
            delta_in = x_in - r_in
            delta_out = x_out - r_out
            safe = delta_in.abs() > 1e-10
            multipliers[name] = torch.where(safe, delta_out / torch.where(safe, delta_in, torch.ones_like(delta_in)), torch.ones_like(delta_in))
        # propagate the rescaled multipliers backward through the two-layer model
        fc1, fc2 = self.model[0], self.model[2]
        grad_hidden = fc2.weight[target].detach() * multipliers["1"][0]
        grad_input = grad_hidden @ fc1.weight.detach()
        return grad_input * (inputs - baselines)


model = nn.Sequential(
    nn.Linear(4, 6),
    nn.ReLU(inplace=True),  # <-- IPL002: the forward hook's recorded input is overwritten by the in-place ReLU
    nn.Linear(6, 2),
)
dl = DeepLiftRescale(model)
inputs = torch.randn(1, 4)
baselines = torch.zeros(1, 4)
attributions = dl.attribute(inputs, baselines, target=1)
